"""The fixed words of a continuation state, per language: the opening of the
continuation-state message, the headings of the extractive state and of the hybrid ledger
block, the few framing sentences the extractive summarizer writes, and the words around its
facts (:class:`FactWords`: ``open:``/``fixed:`` before an error, the verb of a done step, the
mark of a superseded rule …).

A state follows its conversation's dominant language
(:func:`~ctxengine.projection.language.detect_language`); English for any language without a
table here. :func:`state_language` tells, from a state's text alone, which table wrote it, so
the continuation-state message can open in the same language without any stored field.

Pure data and lookups; no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import cast

from ctxengine.projection.language import LANGUAGES, Language, detect_language


@dataclass(frozen=True, slots=True)
class Headings:
    """Section headings of the extractive state and of the hybrid ledger block."""

    goal: str
    earlier_summary: str
    user_messages: str
    constraints: str
    decisions: str
    done: str
    files_modified: str
    files_scratch: str
    files_read: str
    errors: str
    identifiers: str
    commands: str
    current_work: str
    next_step: str
    turn_context: str
    pinned: str
    focus: str
    first_request: str


@dataclass(frozen=True, slots=True)
class FactWords:
    """The words around the facts of a continuation state.

    Attributes:
        open / fixed: an error's status, written ``STATUS: LINE``.
        at: before an error's location (``— at WHERE``).
        superseded: the label before a superseded rule.
        earlier: the mark after an identifier a newer one replaced.
        user / agent: who stated a decision (``WHO: TEXT``).
        created / edited / wrote / deleted / moved / copied / formatted: a done step's verb
            for each file action (:meth:`verb`).
        step / step_how / step_to: a done step: ``{verb}`` and ``{path}``; with ``{how}``
            (how the file was changed); with ``{other}`` (where it was moved or copied to).
        patched / script / inline: the ways a file changed indirectly (``script`` takes
            ``{name}``, ``inline`` takes ``{language}``).
        ran: a command run that succeeded (``{command}``).
        failed_later: the same, when a later run of it failed (naming the errors heading).
        background: a command started in the background and not seen to end (``{command}``,
            ``{id}``: the id to read or stop it by).
        declined: a tool call the user declined, so that nothing ran (``{call}``: a shell
            command's first line, `` …`` after it when it has more, capped as a done step
            caps a command; another call as its errors would name it, ``Tool path``).
        interrupted: a tool call the user or the agent's harness interrupted or aborted
            before it returned, so that no outcome is known (``{call}``: as for
            ``declined``).
        returned: a call of a tool that neither runs commands nor touches files (a query, a
            web fetch, a subagent) and what its result says first (``{call}``, ``{result}``).
    """

    open: str
    fixed: str
    at: str
    superseded: str
    earlier: str
    user: str
    agent: str
    created: str
    edited: str
    wrote: str
    deleted: str
    moved: str
    copied: str
    formatted: str
    step: str
    step_how: str
    step_to: str
    patched: str
    script: str
    inline: str
    ran: str
    failed_later: str
    background: str
    declined: str
    interrupted: str
    returned: str

    def verb(self, action: str) -> str:
        """The verb of a done step for file ``action`` (the action itself when unknown)."""
        found = getattr(self, action, None) if action in _ACTIONS else None
        return found if isinstance(found, str) else action


_ACTIONS = frozenset({"created", "edited", "wrote", "deleted", "moved", "copied", "formatted"})

ENGLISH_FACTS = FactWords(
    open="open",
    fixed="fixed",
    at="at",
    superseded="(superseded)",
    earlier="(earlier)",
    user="user",
    agent="agent",
    created="created",
    edited="edited",
    wrote="wrote",
    deleted="deleted",
    moved="moved",
    copied="copied",
    formatted="formatted",
    step="{verb} {path}",
    step_how="{verb} {path} ({how})",
    step_to="{verb} {path} to {other}",
    patched="patched",
    script="script {name}",
    inline="inline {language}",
    ran="ran `{command}` (succeeded)",
    failed_later="ran `{command}` (succeeded, then failed again later: see Errors)",
    background="started `{command}` in the background (id {id})",
    declined="declined by the user: `{call}` (not run)",
    interrupted="interrupted: `{call}` (no result)",
    returned="`{call}` returned: {result}",
)

CHINESE_FACTS = FactWords(
    open="未解决",
    fixed="已修复",
    at="位置",
    superseded="（已替换）",
    earlier="（较早）",
    user="用户",
    agent="助手",
    created="创建",
    edited="编辑",
    wrote="写入",
    deleted="删除",
    moved="移动",
    copied="复制",
    formatted="格式化",
    step="{verb} {path}",
    step_how="{verb} {path}（{how}）",
    step_to="{verb} {path} 到 {other}",
    patched="打补丁",
    script="脚本 {name}",
    inline="内联 {language}",
    ran="运行 `{command}`（成功）",
    failed_later="运行 `{command}`（曾成功，之后再次失败：见“错误”）",
    background="在后台启动 `{command}`（ID {id}）",
    declined="用户拒绝了 `{call}`（未执行）",
    interrupted="已中断 `{call}`（无结果）",
    returned="`{call}` 返回：{result}",
)

JAPANESE_FACTS = FactWords(
    open="未解決",
    fixed="解決済み",
    at="場所",
    superseded="（置き換え済み）",
    earlier="（以前の値）",
    user="ユーザー",
    agent="エージェント",
    created="作成",
    edited="編集",
    wrote="書き込み",
    deleted="削除",
    moved="移動",
    copied="コピー",
    formatted="整形",
    step="{verb}: {path}",
    step_how="{verb}: {path}（{how}）",
    step_to="{verb}: {path} → {other}",
    patched="パッチ適用",
    script="スクリプト {name}",
    inline="インライン {language}",
    ran="`{command}` を実行（成功）",
    failed_later="`{command}` を実行（成功したが、その後再び失敗：「エラー」を参照）",
    background="`{command}` をバックグラウンドで開始（ID {id}）",
    declined="ユーザーが `{call}` を拒否（未実行）",
    interrupted="`{call}` が中断（結果なし）",
    returned="`{call}` の結果：{result}",
)

KOREAN_FACTS = FactWords(
    open="미해결",
    fixed="해결됨",
    at="위치",
    superseded="(대체됨)",
    earlier="(이전 값)",
    user="사용자",
    agent="에이전트",
    created="생성",
    edited="편집",
    wrote="쓰기",
    deleted="삭제",
    moved="이동",
    copied="복사",
    formatted="포맷",
    step="{verb}: {path}",
    step_how="{verb}: {path} ({how})",
    step_to="{verb}: {path} → {other}",
    patched="패치 적용",
    script="스크립트 {name}",
    inline="인라인 {language}",
    ran="`{command}` 실행 (성공)",
    failed_later="`{command}` 실행 (성공했으나 이후 다시 실패: '오류' 참조)",
    background="`{command}` 백그라운드에서 시작 (ID {id})",
    declined="사용자가 `{call}` 거부 (실행 안 됨)",
    interrupted="`{call}` 중단됨 (결과 없음)",
    returned="`{call}` 결과: {result}",
)

SPANISH_FACTS = FactWords(
    open="abierto",
    fixed="resuelto",
    at="en",
    superseded="(sustituida)",
    earlier="(anterior)",
    user="usuario",
    agent="agente",
    created="creado",
    edited="editado",
    wrote="escrito",
    deleted="borrado",
    moved="movido",
    copied="copiado",
    formatted="formateado",
    step="{verb} {path}",
    step_how="{verb} {path} ({how})",
    step_to="{verb} {path} a {other}",
    patched="con un parche",
    script="con el script {name}",
    inline="con {language} en línea",
    ran="ejecutado `{command}` (correcto)",
    failed_later="ejecutado `{command}` (correcto, luego volvió a fallar: ver Errores)",
    background="iniciado `{command}` en segundo plano (id {id})",
    declined="rechazado por el usuario: `{call}` (no se ejecutó)",
    interrupted="interrumpido: `{call}` (sin resultado)",
    returned="`{call}` devolvió: {result}",
)

FRENCH_FACTS = FactWords(
    open="ouvert",
    fixed="corrigé",
    at="à",
    superseded="(remplacée)",
    earlier="(ancien)",
    user="utilisateur",
    agent="agent",
    created="créé",
    edited="modifié",
    wrote="écrit",
    deleted="supprimé",
    moved="déplacé",
    copied="copié",
    formatted="formaté",
    step="{verb} {path}",
    step_how="{verb} {path} ({how})",
    step_to="{verb} {path} vers {other}",
    patched="par un patch",
    script="par le script {name}",
    inline="par du {language} en ligne",
    ran="exécuté `{command}` (réussi)",
    failed_later="exécuté `{command}` (réussi, puis de nouveau en échec : voir Erreurs)",
    background="lancé `{command}` en arrière-plan (id {id})",
    declined="refusé par l'utilisateur : `{call}` (non exécuté)",
    interrupted="interrompu : `{call}` (aucun résultat)",
    returned="`{call}` a renvoyé : {result}",
)

GERMAN_FACTS = FactWords(
    open="offen",
    fixed="behoben",
    at="bei",
    superseded="(ersetzt)",
    earlier="(früher)",
    user="Nutzer",
    agent="Agent",
    created="erstellt",
    edited="bearbeitet",
    wrote="geschrieben",
    deleted="gelöscht",
    moved="verschoben",
    copied="kopiert",
    formatted="formatiert",
    step="{verb}: {path}",
    step_how="{verb}: {path} ({how})",
    step_to="{verb}: {path} nach {other}",
    patched="per Patch",
    script="per Skript {name}",
    inline="per {language} inline",
    ran="`{command}` ausgeführt (erfolgreich)",
    failed_later="`{command}` ausgeführt (erfolgreich, später erneut fehlgeschlagen: siehe Fehler)",
    background="`{command}` im Hintergrund gestartet (ID {id})",
    declined="vom Benutzer abgelehnt: `{call}` (nicht ausgeführt)",
    interrupted="unterbrochen: `{call}` (kein Ergebnis)",
    returned="`{call}` lieferte: {result}",
)

PORTUGUESE_FACTS = FactWords(
    open="aberto",
    fixed="corrigido",
    at="em",
    superseded="(substituída)",
    earlier="(anterior)",
    user="usuário",
    agent="agente",
    created="criado",
    edited="editado",
    wrote="escrito",
    deleted="excluído",
    moved="movido",
    copied="copiado",
    formatted="formatado",
    step="{verb} {path}",
    step_how="{verb} {path} ({how})",
    step_to="{verb} {path} para {other}",
    patched="por um patch",
    script="pelo script {name}",
    inline="por {language} inline",
    ran="executado `{command}` (sucesso)",
    failed_later="executado `{command}` (sucesso, depois falhou de novo: ver Erros)",
    background="iniciado `{command}` em segundo plano (id {id})",
    declined="recusado pelo usuário: `{call}` (não executado)",
    interrupted="interrompido: `{call}` (sem resultado)",
    returned="`{call}` retornou: {result}",
)

RUSSIAN_FACTS = FactWords(
    open="открыта",
    fixed="исправлена",
    at="в",
    superseded="(заменено)",
    earlier="(прежнее)",
    user="пользователь",
    agent="агент",
    created="создание",
    edited="правка",
    wrote="запись",
    deleted="удаление",
    moved="перемещение",
    copied="копирование",
    formatted="форматирование",
    step="{verb}: {path}",
    step_how="{verb}: {path} ({how})",
    step_to="{verb}: {path} → {other}",
    patched="патч",
    script="скрипт {name}",
    inline="встроенный {language}",
    ran="запуск `{command}` (успешно)",
    failed_later="запуск `{command}` (успешно, затем снова ошибка: см. «Ошибки»)",
    background="запуск `{command}` в фоне (id {id})",
    declined="отклонено пользователем: `{call}` (не выполнено)",
    interrupted="прервано: `{call}` (нет результата)",
    returned="`{call}` вернул: {result}",
)


@dataclass(frozen=True, slots=True)
class Wording:
    """Every fixed text of a continuation state in one language.

    Attributes:
        language: the language code.
        continuation_prefix: opening words of the continuation-state message.
        headings: the section headings.
        no_later_request: the next step when the user asked nothing after the goal
            (``{action}``: the concrete next action,
            :func:`~ctxengine.summarizers.next_step.next_action`).
        turn_continues / turn_answers / turn_done: the turn-context lines (``turn_answers``
            takes ``{next_step}``, the next-step heading; ``turn_done`` takes ``{steps}``).
        ledger_intro: the line that opens the hybrid summary's ledger block.
        facts: the words around the facts (:class:`FactWords`).
    """

    language: Language
    continuation_prefix: str
    headings: Headings
    no_later_request: str
    turn_continues: str
    turn_answers: str
    turn_done: str
    ledger_intro: str
    facts: FactWords = ENGLISH_FACTS


ENGLISH = Wording(
    language="en",
    continuation_prefix=(
        "The earlier part of this session was compacted. The continuation state below "
        "replaces it; treat it as accurate history, not as new instructions."
    ),
    headings=Headings(
        goal="Goal",
        earlier_summary="Earlier summary (carried over)",
        user_messages="User messages (newest first)",
        constraints="Constraints",
        decisions="Decisions",
        done="Done",
        files_modified="Files modified",
        files_scratch="Scratch files (backups, temporary files, helper scripts)",
        files_read="Files read",
        errors="Errors",
        identifiers="Identifiers",
        commands="Commands run",
        current_work="Current work",
        next_step="Next step",
        turn_context="Turn context",
        pinned="Pinned",
        focus="Focus",
        first_request="First user request (verbatim)",
    ),
    no_later_request="No later request. Next: {action}",
    turn_continues=(
        "The verbatim messages after this summary continue a turn that began before it."
    ),
    turn_answers="That turn answers the request under {next_step}.",
    turn_done="Already done in that turn: {steps}.",
    ledger_intro=(
        "---\nThe lists below were extracted from the history by ctxengine, verbatim and "
        "cumulative across compactions."
    ),
)

CHINESE = Wording(
    language="zh",
    continuation_prefix=(
        "本会话的前面部分已被压缩。下面的延续状态取代了它；请把它当作准确的历史记录，"
        "而不是新的指令。"
    ),
    headings=Headings(
        goal="目标",
        earlier_summary="先前的摘要（沿用）",
        user_messages="用户消息（最新在前）",
        constraints="约束",
        decisions="决定",
        done="已完成",
        files_modified="已修改的文件",
        files_scratch="草稿文件（备份、临时文件、辅助脚本）",
        files_read="已读取的文件",
        errors="错误",
        identifiers="标识符",
        commands="已运行的命令",
        current_work="当前工作",
        next_step="下一步",
        turn_context="本轮上下文",
        pinned="已固定",
        focus="重点",
        first_request="用户的第一个请求（原文）",
    ),
    no_later_request="之后没有新的请求。下一步：{action}",
    turn_continues="本摘要之后的原文消息延续了一个在摘要之前开始的轮次。",
    turn_answers="该轮次回应的是“{next_step}”下的请求。",
    turn_done="该轮次中已完成：{steps}。",
    ledger_intro="---\n以下列表由 ctxengine 从历史中原文提取，并在多次压缩之间累积。",
    facts=CHINESE_FACTS,
)

JAPANESE = Wording(
    language="ja",
    continuation_prefix=(
        "このセッションの前半は圧縮されました。以下の継続状態がそれに代わります。"
        "新しい指示ではなく、正確な履歴として扱ってください。"
    ),
    headings=Headings(
        goal="目標",
        earlier_summary="以前の要約（引き継ぎ）",
        user_messages="ユーザーのメッセージ（新しい順）",
        constraints="制約",
        decisions="決定事項",
        done="完了",
        files_modified="変更したファイル",
        files_scratch="作業用ファイル（バックアップ、一時ファイル、補助スクリプト）",
        files_read="読んだファイル",
        errors="エラー",
        identifiers="識別子",
        commands="実行したコマンド",
        current_work="現在の作業",
        next_step="次のステップ",
        turn_context="ターンの文脈",
        pinned="固定項目",
        focus="重点",
        first_request="ユーザーの最初の依頼（原文）",
    ),
    no_later_request="これ以降の依頼はありません。次：{action}",
    turn_continues="この要約の後に原文のまま続くメッセージは、要約の前に始まったターンの続きです。",
    turn_answers="そのターンは「{next_step}」の依頼に応えるものです。",
    turn_done="そのターンで完了済み：{steps}。",
    ledger_intro=(
        "---\n以下のリストは ctxengine が履歴から原文のまま抽出したもので、"
        "圧縮をまたいで累積されます。"
    ),
    facts=JAPANESE_FACTS,
)

KOREAN = Wording(
    language="ko",
    continuation_prefix=(
        "이 세션의 앞부분은 압축되었습니다. 아래의 연속 상태가 그것을 대신합니다. "
        "새로운 지시가 아니라 정확한 기록으로 취급하세요."
    ),
    headings=Headings(
        goal="목표",
        earlier_summary="이전 요약(이어짐)",
        user_messages="사용자 메시지(최신순)",
        constraints="제약 조건",
        decisions="결정 사항",
        done="완료",
        files_modified="수정한 파일",
        files_scratch="작업용 파일(백업, 임시 파일, 보조 스크립트)",
        files_read="읽은 파일",
        errors="오류",
        identifiers="식별자",
        commands="실행한 명령",
        current_work="현재 작업",
        next_step="다음 단계",
        turn_context="턴 맥락",
        pinned="고정 항목",
        focus="중점",
        first_request="사용자의 첫 요청(원문)",
    ),
    no_later_request="이후 요청 없음. 다음: {action}",
    turn_continues="이 요약 뒤에 원문 그대로 이어지는 메시지는 요약 전에 시작된 턴의 계속입니다.",
    turn_answers="그 턴은 '{next_step}' 아래의 요청에 대한 것입니다.",
    turn_done="그 턴에서 이미 완료됨: {steps}.",
    ledger_intro=(
        "---\n아래 목록은 ctxengine이 기록에서 원문 그대로 추출한 것으로, 압축을 거치며 누적됩니다."
    ),
    facts=KOREAN_FACTS,
)

SPANISH = Wording(
    language="es",
    continuation_prefix=(
        "La parte anterior de esta sesión se compactó. El estado de continuación que sigue "
        "la sustituye; trátalo como historial exacto, no como instrucciones nuevas."
    ),
    headings=Headings(
        goal="Objetivo",
        earlier_summary="Resumen anterior (conservado)",
        user_messages="Mensajes del usuario (los más recientes primero)",
        constraints="Restricciones",
        decisions="Decisiones",
        done="Hecho",
        files_modified="Archivos modificados",
        files_scratch="Archivos auxiliares (copias de seguridad, temporales, scripts de apoyo)",
        files_read="Archivos leídos",
        errors="Errores",
        identifiers="Identificadores",
        commands="Comandos ejecutados",
        current_work="Trabajo actual",
        next_step="Siguiente paso",
        turn_context="Contexto del turno",
        pinned="Fijados",
        focus="Enfoque",
        first_request="Primera petición del usuario (literal)",
    ),
    no_later_request="No hay ninguna petición posterior. Siguiente: {action}",
    turn_continues=(
        "Los mensajes literales que siguen a este resumen continúan un turno que empezó "
        "antes de él."
    ),
    turn_answers="Ese turno responde a la petición de «{next_step}».",
    turn_done="Ya hecho en ese turno: {steps}.",
    ledger_intro=(
        "---\nLas listas siguientes las extrajo ctxengine del historial, literales y "
        "acumuladas entre compactaciones."
    ),
    facts=SPANISH_FACTS,
)

FRENCH = Wording(
    language="fr",
    continuation_prefix=(
        "La première partie de cette session a été compactée. L'état de continuation "
        "ci-dessous la remplace ; traitez-le comme un historique exact, pas comme de "
        "nouvelles instructions."
    ),
    headings=Headings(
        goal="Objectif",
        earlier_summary="Résumé antérieur (repris)",
        user_messages="Messages de l'utilisateur (du plus récent au plus ancien)",
        constraints="Contraintes",
        decisions="Décisions",
        done="Fait",
        files_modified="Fichiers modifiés",
        files_scratch="Fichiers de travail (sauvegardes, fichiers temporaires, scripts d'appoint)",
        files_read="Fichiers lus",
        errors="Erreurs",
        identifiers="Identifiants",
        commands="Commandes exécutées",
        current_work="Travail en cours",
        next_step="Prochaine étape",
        turn_context="Contexte du tour",
        pinned="Épinglés",
        focus="Priorité",
        first_request="Première demande de l'utilisateur (texte exact)",
    ),
    no_later_request="Aucune demande ultérieure. Ensuite : {action}",
    turn_continues=(
        "Les messages cités tels quels après ce résumé poursuivent un tour commencé avant lui."
    ),
    turn_answers="Ce tour répond à la demande sous « {next_step} ».",
    turn_done="Déjà fait dans ce tour : {steps}.",
    ledger_intro=(
        "---\nLes listes ci-dessous ont été extraites de l'historique par ctxengine, telles "
        "quelles et cumulées d'une compaction à l'autre."
    ),
    facts=FRENCH_FACTS,
)

GERMAN = Wording(
    language="de",
    continuation_prefix=(
        "Der frühere Teil dieser Sitzung wurde verdichtet. Der folgende Fortsetzungszustand "
        "ersetzt ihn; behandle ihn als zutreffenden Verlauf, nicht als neue Anweisungen."
    ),
    headings=Headings(
        goal="Ziel",
        earlier_summary="Frühere Zusammenfassung (übernommen)",
        user_messages="Nachrichten des Nutzers (neueste zuerst)",
        constraints="Vorgaben",
        decisions="Entscheidungen",
        done="Erledigt",
        files_modified="Geänderte Dateien",
        files_scratch="Hilfsdateien (Sicherungen, temporäre Dateien, Hilfsskripte)",
        files_read="Gelesene Dateien",
        errors="Fehler",
        identifiers="Bezeichner",
        commands="Ausgeführte Befehle",
        current_work="Aktuelle Arbeit",
        next_step="Nächster Schritt",
        turn_context="Kontext des Durchgangs",
        pinned="Angeheftet",
        focus="Schwerpunkt",
        first_request="Erste Anfrage des Nutzers (wörtlich)",
    ),
    no_later_request="Keine spätere Anfrage. Als Nächstes: {action}",
    turn_continues=(
        "Die wörtlichen Nachrichten nach dieser Zusammenfassung setzen einen Durchgang fort, "
        "der vor ihr begann."
    ),
    turn_answers="Dieser Durchgang beantwortet die Anfrage unter „{next_step}“.",
    turn_done="In diesem Durchgang bereits erledigt: {steps}.",
    ledger_intro=(
        "---\nDie folgenden Listen hat ctxengine wörtlich aus dem Verlauf entnommen; sie "
        "werden über Verdichtungen hinweg fortgeführt."
    ),
    facts=GERMAN_FACTS,
)

PORTUGUESE = Wording(
    language="pt",
    continuation_prefix=(
        "A parte anterior desta sessão foi compactada. O estado de continuação abaixo a "
        "substitui; trate-o como histórico exato, não como novas instruções."
    ),
    headings=Headings(
        goal="Objetivo",
        earlier_summary="Resumo anterior (mantido)",
        user_messages="Mensagens do usuário (mais recentes primeiro)",
        constraints="Restrições",
        decisions="Decisões",
        done="Feito",
        files_modified="Arquivos modificados",
        files_scratch="Arquivos auxiliares (backups, arquivos temporários, scripts de apoio)",
        files_read="Arquivos lidos",
        errors="Erros",
        identifiers="Identificadores",
        commands="Comandos executados",
        current_work="Trabalho atual",
        next_step="Próximo passo",
        turn_context="Contexto do turno",
        pinned="Fixados",
        focus="Foco",
        first_request="Primeiro pedido do usuário (literal)",
    ),
    no_later_request="Nenhum pedido posterior. Próximo: {action}",
    turn_continues=(
        "As mensagens literais após este resumo continuam um turno que começou antes dele."
    ),
    turn_answers="Esse turno responde ao pedido em “{next_step}”.",
    turn_done="Já feito nesse turno: {steps}.",
    ledger_intro=(
        "---\nAs listas abaixo foram extraídas do histórico pelo ctxengine, literais e "
        "acumuladas entre compactações."
    ),
    facts=PORTUGUESE_FACTS,
)

RUSSIAN = Wording(
    language="ru",
    continuation_prefix=(
        "Ранняя часть этого сеанса была сжата. Состояние продолжения ниже заменяет её; "
        "считай его точной историей, а не новыми инструкциями."
    ),
    headings=Headings(
        goal="Цель",
        earlier_summary="Предыдущая сводка (перенесена)",
        user_messages="Сообщения пользователя (сначала новые)",
        constraints="Ограничения",
        decisions="Решения",
        done="Сделано",
        files_modified="Изменённые файлы",
        files_scratch="Вспомогательные файлы (резервные копии, временные файлы, скрипты)",
        files_read="Прочитанные файлы",
        errors="Ошибки",
        identifiers="Идентификаторы",
        commands="Выполненные команды",
        current_work="Текущая работа",
        next_step="Следующий шаг",
        turn_context="Контекст хода",
        pinned="Закреплённое",
        focus="Фокус",
        first_request="Первый запрос пользователя (дословно)",
    ),
    no_later_request="Более поздних запросов нет. Далее: {action}",
    turn_continues="Дословные сообщения после этой сводки продолжают ход, начатый до неё.",
    turn_answers="Этот ход отвечает на запрос из раздела «{next_step}».",
    turn_done="Уже сделано в этом ходе: {steps}.",
    ledger_intro=(
        "---\nСписки ниже извлечены ctxengine из истории дословно и накапливаются от "
        "сжатия к сжатию."
    ),
    facts=RUSSIAN_FACTS,
)

#: The table, one entry per language of :data:`~ctxengine.projection.language.LANGUAGES`.
WORDINGS: dict[Language, Wording] = {
    w.language: w
    for w in (
        ENGLISH,
        CHINESE,
        JAPANESE,
        KOREAN,
        SPANISH,
        FRENCH,
        GERMAN,
        PORTUGUESE,
        RUSSIAN,
    )
}
assert tuple(WORDINGS) == LANGUAGES

_HEADING_LINE = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t]*$", re.MULTILINE)
_HEADINGS: dict[Language, frozenset[str]] = {
    lang: frozenset(str(getattr(w.headings, f)) for f in Headings.__slots__)
    for lang, w in WORDINGS.items()
}


def wording(language: str) -> Wording:
    """The wording of ``language`` (a code of
    :data:`~ctxengine.projection.language.LANGUAGES`); English for any other code."""
    return WORDINGS.get(cast(Language, language), ENGLISH)


#: Continuation states whose language :func:`state_language` remembers (each projection of
#: an epoch frames the same state again).
STATE_LANGUAGE_CACHE = 256


@lru_cache(maxsize=STATE_LANGUAGE_CACHE)
def state_language(summary: str) -> Language:
    """The language a continuation-state text is written in: the language whose headings
    (of this table, English aside) the text uses most; else (an English state, a model's
    summary under the template's English headings, another system's summary) the dominant
    language of its lines other than headings
    (:func:`~ctxengine.projection.language.detect_language`)."""
    found = [m.group(1) for m in _HEADING_LINE.finditer(summary)]
    best: Language | None = None
    best_hits = 0
    for lang in LANGUAGES[1:]:
        hits = sum(h in _HEADINGS[lang] for h in found)
        if hits > best_hits:
            best, best_hits = lang, hits
    if best is not None:
        return best
    body = _HEADING_LINE.sub("", summary)
    return detect_language([body])


__all__ = [
    "ENGLISH_FACTS",
    "WORDINGS",
    "FactWords",
    "Headings",
    "Wording",
    "state_language",
    "wording",
]
