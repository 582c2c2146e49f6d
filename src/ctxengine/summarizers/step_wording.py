"""The next step's sentences and the heading of the closing note of what was left out, in
each language a continuation state is written in (the languages of
:mod:`ctxengine.projection.wording`), so that a state reads in one language.

:func:`step_wording` gives a language's sentences with the headings they name (current
work, errors) and the "no later request" sentence taken from that language's
:class:`~ctxengine.projection.wording.Wording`. The closing note's item names ("3 more
commands run") stay English.
"""

from __future__ import annotations

from dataclasses import replace

from ctxengine.projection.wording import Wording as StateWording
from ctxengine.summarizers.next_step import ENGLISH, Wording

#: The next step's sentences per language code (English is :data:`~.next_step.ENGLISH`).
STEP_WORDINGS: dict[str, Wording] = {
    "en": ENGLISH,
    "zh": Wording(
        open_request="用户最新的请求（进行中）：{request}",
        answered_request="用户最新的请求（已在此之前答复，见“{current_work}”）：{request}",
        no_request="到目前为止，历史中没有用户请求。",
        goal_answered="上面的目标已在此之前答复（见“{current_work}”）。",
        ack_plan="“{ack}”，即接受助手的提议：{plan}",
        ack_message="“{ack}”，即回复助手的消息：{message}",
        ack_request="“{ack}”，即继续：{request}",
        ack_goal="“{ack}”，即继续上面的目标。下一步：{action}",
        ack_alone="“{ack}”，之前没有可以继续的请求",
        plan_open="助手陈述的计划：{plan}",
        plan_answered="助手最后一条消息的结尾：{plan}",
        open_errors="待解决的错误：{count} 个（见“{errors}”）。",
        open_errors_partial=(
            "待解决的错误：{count} 个（“{errors}”中列出 {shown} "
            "个，另有 {rest} 个未显示：{where}）。"
        ),
        open_errors_some="待解决的错误：{count} 个（部分列在“{errors}”中，其余未显示：{where}）。",
        where_entries="历史记录第 {first}–{last} 条",
        where_note="计入“{not_shown}”",
        go_on="请接着处理本摘要之后的消息。",
        goal_later="此前没有新的请求；此后用户的最新消息：{request}",
        action_plan="助手陈述的计划：{plan}",
        action_todo="第一个未完成的待办事项（{status}）：{item}",
        action_error="解决最新的未解决错误：{error}",
        action_check="对照“{done}”和“{current_work}”检查上面的目标，完成尚未完成的部分。",
    ),
    "ja": Wording(
        open_request="ユーザーの最新の依頼（進行中）：{request}",
        answered_request=(
            "ユーザーの最新の依頼（この時点より前に回答済み、「{current_work}」を参照）：{request}"
        ),
        no_request="これまでの履歴にユーザーの依頼はありません。",
        goal_answered="上の目標はこの時点より前に回答済みです（「{current_work}」を参照）。",
        ack_plan="「{ack}」、つまりエージェントの提案の受け入れ：{plan}",
        ack_message="「{ack}」、つまりエージェントのメッセージへの返答：{message}",
        ack_request="「{ack}」、つまり次の依頼の続行：{request}",
        ack_goal="「{ack}」、つまり上の目標の続行。次：{action}",
        ack_alone="「{ack}」、続けるべき以前の依頼はない",
        plan_open="エージェントが述べた計画：{plan}",
        plan_answered="エージェントの最後のメッセージの結び：{plan}",
        open_errors="未解決のエラー：{count} 件（「{errors}」を参照）。",
        open_errors_partial=(
            "未解決のエラー：{count} 件（「{errors}」に {shown} "
            "件、ほか {rest} 件は未表示：{where}）。"
        ),
        open_errors_some=(
            "未解決のエラー：{count} 件（一部は「{errors}」に、残りは未表示：{where}）。"
        ),
        where_entries="履歴のエントリ {first}–{last}",
        where_note="「{not_shown}」に計上",
        go_on="この要約の後のメッセージに沿って続けてください。",
        goal_later="この時点までに新しい依頼はありません。この後のユーザーの最新メッセージ：{request}",
        action_plan="エージェントが述べた計画：{plan}",
        action_todo="最初の未完了の ToDo 項目（{status}）：{item}",
        action_error="最新の未解決のエラーを解決する：{error}",
        action_check="上の目標を「{done}」と「{current_work}」に照らして確認し、まだ済んでいない部分を行う。",
    ),
    "ko": Wording(
        open_request="사용자의 최근 요청 (진행 중): {request}",
        answered_request=(
            "사용자의 최근 요청 (이 시점 이전에 답변됨, '{current_work}' 참조): {request}"
        ),
        no_request="지금까지 기록에 사용자 요청이 없습니다.",
        goal_answered="위의 목표는 이 시점 이전에 답변되었습니다 ('{current_work}' 참조).",
        ack_plan='"{ack}", 즉 에이전트의 제안을 수락: {plan}',
        ack_message='"{ack}", 즉 에이전트의 메시지에 대한 답: {message}',
        ack_request='"{ack}", 즉 다음을 계속: {request}',
        ack_goal='"{ack}", 즉 위의 목표를 계속. 다음: {action}',
        ack_alone='"{ack}", 계속할 이전 요청 없음',
        plan_open="에이전트가 밝힌 계획: {plan}",
        plan_answered="에이전트의 마지막 메시지 끝부분: {plan}",
        open_errors="해결할 오류: {count}개 ('{errors}' 참조).",
        open_errors_partial=(
            "해결할 오류: {count}개 ('{errors}'에 {shown}개,"
            " 나머지 {rest}개는 표시하지 않음: {where})."
        ),
        open_errors_some=(
            "해결할 오류: {count}개 (일부는 '{errors}'에, 나머지는 표시하지 않음: {where})."
        ),
        where_entries="기록의 항목 {first}–{last}",
        where_note="'{not_shown}'에 포함",
        go_on="이 요약 뒤의 메시지를 이어서 진행하세요.",
        goal_later="이 시점 이전에는 이후 요청 없음. 이 시점 이후 사용자의 최근 메시지: {request}",
        action_plan="에이전트가 밝힌 계획: {plan}",
        action_todo="첫 번째 미완료 할 일 항목 ({status}): {item}",
        action_error="가장 최근의 미해결 오류 해결: {error}",
        action_check=(
            "위의 목표를 '{done}' 및 '{current_work}'와 대조해 확인하고, "
            "아직 하지 않은 부분을 수행합니다."
        ),
    ),
    "es": Wording(
        open_request="Última petición del usuario (en curso): {request}",
        answered_request=(
            "Última petición del usuario (respondida antes de este punto, ver {current_work}): "
            "{request}"
        ),
        no_request="Todavía no hay ninguna petición del usuario en el historial.",
        goal_answered=(
            "El objetivo de arriba se respondió antes de este punto (ver {current_work})."
        ),
        ack_plan="«{ack}», aceptando la propuesta del agente: {plan}",
        ack_message="«{ack}», en respuesta al mensaje del agente: {message}",
        ack_request="«{ack}», para seguir con: {request}",
        ack_goal="«{ack}», para seguir con el objetivo de arriba. Siguiente: {action}",
        ack_alone="«{ack}», sin ninguna petición anterior con la que seguir",
        plan_open="Plan declarado por el agente: {plan}",
        plan_answered="El último mensaje del agente terminaba con: {plan}",
        open_errors="Errores abiertos por resolver: {count} (en {errors}).",
        open_errors_partial=(
            "Errores abiertos por resolver: {count} ({shown} en {errors}, {rest} más sin mostrar: "
            "{where})."
        ),
        open_errors_some=(
            "Errores abiertos por resolver: {count} (algunos en {errors}, los demás sin mostrar: "
            "{where})."
        ),
        where_entries="entradas {first}–{last} del historial",
        where_note="contados en {not_shown}",
        go_on="Continúa con los mensajes que siguen a este resumen.",
        goal_later=(
            "Ninguna petición posterior antes de este punto; el último mensaje del usuario después "
            "de él: {request}"
        ),
        action_plan="el plan que indicó el agente: {plan}",
        action_todo="la primera tarea abierta de la lista ({status}): {item}",
        action_error="resolver el último error abierto: {error}",
        action_check=(
            "comprobar el objetivo de arriba frente a {done} y {current_work}, y hacer lo que "
            "falte."
        ),
    ),
    "fr": Wording(
        open_request="Dernière demande de l'utilisateur (en cours) : {request}",
        answered_request=(
            "Dernière demande de l'utilisateur (traitée avant ce point, voir {current_work}) : "
            "{request}"
        ),
        no_request="Aucune demande de l'utilisateur dans l'historique pour l'instant.",
        goal_answered="L'objectif ci-dessus a été traité avant ce point (voir {current_work}).",
        ack_plan="« {ack} », acceptant la proposition de l'agent : {plan}",
        ack_message="« {ack} », en réponse au message de l'agent : {message}",
        ack_request="« {ack} », pour poursuivre : {request}",
        ack_goal="« {ack} », pour poursuivre l'objectif ci-dessus. Ensuite : {action}",
        ack_alone="« {ack} », sans demande antérieure à poursuivre",
        plan_open="Plan annoncé par l'agent : {plan}",
        plan_answered="Le dernier message de l'agent se terminait par : {plan}",
        open_errors="Erreurs ouvertes à résoudre : {count} (voir {errors}).",
        open_errors_partial=(
            "Erreurs ouvertes à résoudre : {count} ({shown} dans {errors}, {rest} autres non "
            "affichées : {where})."
        ),
        open_errors_some=(
            "Erreurs ouvertes à résoudre : {count} (certaines dans {errors}, les autres non "
            "affichées : {where})."
        ),
        where_entries="entrées {first}–{last} de l'historique",
        where_note="comptées dans {not_shown}",
        go_on="Poursuivez avec les messages qui suivent ce résumé.",
        goal_later=(
            "Aucune demande ultérieure avant ce point ; le dernier message de l'utilisateur après "
            "lui : {request}"
        ),
        action_plan="le plan annoncé par l'agent : {plan}",
        action_todo="le premier élément ouvert de la liste de tâches ({status}) : {item}",
        action_error="résoudre la dernière erreur ouverte : {error}",
        action_check=(
            "vérifier l'objectif ci-dessus par rapport à {done} et {current_work}, et faire ce qui "
            "reste."
        ),
    ),
    "de": Wording(
        open_request="Letzte Anfrage des Nutzers (in Arbeit): {request}",
        answered_request=(
            "Letzte Anfrage des Nutzers (vor diesem Punkt beantwortet, siehe {current_work}): "
            "{request}"
        ),
        no_request="Bisher keine Anfrage des Nutzers im Verlauf.",
        goal_answered="Das Ziel oben wurde vor diesem Punkt beantwortet (siehe {current_work}).",
        ack_plan="„{ack}“, also Zustimmung zum Vorschlag des Agenten: {plan}",
        ack_message="„{ack}“, als Antwort auf die Nachricht des Agenten: {message}",
        ack_request="„{ack}“, um fortzufahren mit: {request}",
        ack_goal="„{ack}“, um mit dem Ziel oben fortzufahren. Als Nächstes: {action}",
        ack_alone="„{ack}“, ohne frühere Anfrage, mit der fortzufahren wäre",
        plan_open="Vom Agenten genannter Plan: {plan}",
        plan_answered="Die letzte Nachricht des Agenten endete mit: {plan}",
        open_errors="Offene Fehler zu beheben: {count} (siehe {errors}).",
        open_errors_partial=(
            "Offene Fehler zu beheben: {count} ({shown} unter {errors}, {rest} weitere nicht "
            "gezeigt: {where})."
        ),
        open_errors_some=(
            "Offene Fehler zu beheben: {count} (einige unter {errors}, die übrigen nicht "
            "gezeigt: {where})."
        ),
        where_entries="Einträge {first}–{last} des Verlaufs",
        where_note="gezählt unter {not_shown}",
        go_on="Mach mit den Nachrichten nach dieser Zusammenfassung weiter.",
        goal_later=(
            "Keine spätere Anfrage vor diesem Punkt; die letzte Nachricht des Nutzers danach: "
            "{request}"
        ),
        action_plan="der vom Agenten genannte Plan: {plan}",
        action_todo="der erste offene Eintrag der Aufgabenliste ({status}): {item}",
        action_error="den neuesten offenen Fehler beheben: {error}",
        action_check=(
            "das Ziel oben mit {done} und {current_work} abgleichen und erledigen, was noch fehlt."
        ),
    ),
    "pt": Wording(
        open_request="Último pedido do usuário (em andamento): {request}",
        answered_request=(
            "Último pedido do usuário (respondido antes deste ponto, ver {current_work}): {request}"
        ),
        no_request="Ainda não há pedidos do usuário no histórico.",
        goal_answered="O objetivo acima foi respondido antes deste ponto (ver {current_work}).",
        ack_plan="“{ack}”, aceitando a proposta do agente: {plan}",
        ack_message="“{ack}”, em resposta à mensagem do agente: {message}",
        ack_request="“{ack}”, para continuar com: {request}",
        ack_goal="“{ack}”, para continuar com o objetivo acima. Próximo: {action}",
        ack_alone="“{ack}”, sem pedido anterior para continuar",
        plan_open="Plano declarado pelo agente: {plan}",
        plan_answered="A última mensagem do agente terminava com: {plan}",
        open_errors="Erros em aberto a resolver: {count} (ver {errors}).",
        open_errors_partial=(
            "Erros em aberto a resolver: {count} ({shown} em {errors}, mais {rest} não mostrados: "
            "{where})."
        ),
        open_errors_some=(
            "Erros em aberto a resolver: {count} (alguns em {errors}, os demais não mostrados: "
            "{where})."
        ),
        where_entries="entradas {first}–{last} do histórico",
        where_note="contados em {not_shown}",
        go_on="Continue com as mensagens depois deste resumo.",
        goal_later=(
            "Nenhum pedido posterior antes deste ponto; a última mensagem do usuário depois dele: "
            "{request}"
        ),
        action_plan="o plano declarado pelo agente: {plan}",
        action_todo="o primeiro item aberto da lista de tarefas ({status}): {item}",
        action_error="resolver o erro em aberto mais recente: {error}",
        action_check=(
            "conferir o objetivo acima com {done} e {current_work}, e fazer o que ainda falta."
        ),
    ),
    "ru": Wording(
        open_request="Последний запрос пользователя (в работе): {request}",
        answered_request=(
            "Последний запрос пользователя (выполнен до этого места, см. «{current_work}»): "
            "{request}"
        ),
        no_request="В истории пока нет запросов пользователя.",
        goal_answered="Цель выше была выполнена до этого места (см. «{current_work}»).",
        ack_plan="«{ack}» — согласие с предложением агента: {plan}",
        ack_message="«{ack}» — ответ на сообщение агента: {message}",
        ack_request="«{ack}» — продолжить: {request}",
        ack_goal="«{ack}» — продолжить цель выше. Далее: {action}",
        ack_alone="«{ack}» — без более раннего запроса, который можно продолжить",
        plan_open="План, названный агентом: {plan}",
        plan_answered="Последнее сообщение агента заканчивалось так: {plan}",
        open_errors="Открытые ошибки: {count} (см. «{errors}»).",
        open_errors_partial=(
            "Открытые ошибки: {count} ({shown} в «{errors}», ещё {rest} не показаны: {where})."
        ),
        open_errors_some=(
            "Открытые ошибки: {count} (часть в «{errors}», остальные не показаны: {where})."
        ),
        where_entries="записи {first}–{last} истории",
        where_note="учтены в «{not_shown}»",
        go_on="Продолжайте с сообщений после этого резюме.",
        goal_later=(
            "До этого места более поздних запросов нет; последнее сообщение пользователя после "
            "него: {request}"
        ),
        action_plan="план, названный агентом: {plan}",
        action_todo="первый незакрытый пункт списка задач ({status}): {item}",
        action_error="устранить последнюю нерешённую ошибку: {error}",
        action_check=(
            "сверить цель выше с разделами «{done}» и «{current_work}» и сделать то, что ещё не "
            "сделано."
        ),
    ),
}

#: The closing note's heading per language code.
NOT_SHOWN_HEADINGS: dict[str, str] = {
    "en": "Not shown (no room left)",
    "zh": "未显示（没有空间）",
    "ja": "表示していない項目（容量不足）",
    "ko": "표시하지 않음 (공간 부족)",
    "es": "No mostrado (sin espacio)",
    "fr": "Non affiché (plus de place)",
    "de": "Nicht gezeigt (kein Platz mehr)",
    "pt": "Não mostrado (sem espaço)",
    "ru": "Не показано (нет места)",
}


def step_wording(words: StateWording) -> Wording:
    """The next step's sentences in the language of ``words`` (English for a language this
    table lacks), naming its headings (the closing note's too) and using its "no later
    request" sentence."""
    found = STEP_WORDINGS.get(words.language, ENGLISH)
    return replace(
        found,
        goal_open=words.no_later_request,
        current_work=words.headings.current_work,
        errors=words.headings.errors,
        done=words.headings.done,
        not_shown=not_shown_heading(words),
    )


def not_shown_heading(words: StateWording) -> str:
    """The closing note's heading in the language of ``words`` (English when missing)."""
    return NOT_SHOWN_HEADINGS.get(words.language, NOT_SHOWN_HEADINGS["en"])


__all__ = ["NOT_SHOWN_HEADINGS", "STEP_WORDINGS", "not_shown_heading", "step_wording"]
