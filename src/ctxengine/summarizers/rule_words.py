"""The words that make a sentence a rule, and a later rule a replacement, in the nine
languages of the continuation state (English, Chinese, Japanese, Korean, Spanish, French,
German, Portuguese, Russian: :mod:`ctxengine.projection.language`).

Each table is a regular-expression source, matched case-insensitively; every language's
entries are joined into one pattern (:data:`MODAL`, :data:`ADVERB` …), except the few
that read as English words too, which count only in a conversation of their language
(:data:`GATED`). What each kind of word does is :mod:`ctxengine.summarizers.rules`:

- :data:`MODAL_WORDS`: normative wherever they stand (``must``, ``debes``, ``il faut``,
  ``muss``, ``deve``, ``должен``, ``なければならない``, ``해야 합니다``, ``必须``);
- :data:`ADVERB_WORDS`: rule words that also describe (``never``, ``always``, ``only``,
  ``don't``, ``make sure``, ``nunca``, ``jamais``, ``niemals``, ``никогда``): a rule only
  at the start of a clause (an imperative), or after *you*/*we* with a modal;
- :data:`NEGATIVE_IMPERATIVES`: a prohibition at the start of a clause (``no
  modifiques``, ``ne modifiez pas``, ``não modifique``, ``не трогай``);
- :data:`IMPERATIVE_WORDS`: verbs that state a standing preference without a rule word
  (``use``, ``target``, ``usa``, ``utilise``, ``verwende``, ``используй``, ``使用``,
  ``を使って``, ``사용해``);
- :data:`REPLACES_WORDS`: the sentence replaces an earlier rule (``from now on``,
  ``instead``, ``a partir de ahora``, ``désormais``, ``ab jetzt``, ``отныне``, ``从现在开始``,
  ``これからは``, ``이제부터``);
- :data:`PERMITS_WORDS`: a permission that lifts an earlier prohibition (``you can … now``,
  ``feel free to``, ``ya puedes``, ``du darfst jetzt``, ``теперь можно``, ``现在可以``);
- :data:`LIFTS_WORDS`: a rule is lifted (``you no longer need to …``, ``ya no hace falta``,
  ``nicht mehr nötig``, ``不再需要``);
- :data:`REVOKES_WORDS`: a pattern naming what is replaced, in its group ``what``
  (``instead of 8000``, ``forget the tabs rule``, ``en lugar de``, ``statt``, ``вместо``,
  ``而不是``, ``ではなく``, ``대신``);
- :data:`LEAD_WORDS`: words before an imperative that do not change it (``please``,
  ``also``, ``and``, ``actually``, ``por favor``, ``bitte``, ``пожалуйста``).
"""

from __future__ import annotations

import re

from ctxengine.projection.language import Language


def _join(table: dict[Language, str]) -> str:
    return "|".join(f"(?:{source})" for source in table.values() if source)


#: Normative wherever they stand.
MODAL_WORDS: dict[Language, str] = {
    "en": r"\b(?:must(?:n'?t| not)?|shall not|should ?n[o']t|required to|not allowed to|"
    r"(?:is|are) forbidden|under no circumstances|no need to|(?:you|we) (?:really |also |"
    r"always |still )?should\b(?! (?:(?:now|then|probably|hopefully) )?be (?:good|fine|"
    r"ok(?:ay)?|ready|done|set|all set|able|there)\b))\b",
    "zh": r"不要|必须|禁止|务必|不能|只能|不许|不准|不得|切勿|请勿|一定要|不可以|别再|始终|"
    r"一律|永远不要|绝对不要",
    "ja": r"なければならない|なければなりません|なければいけない|なければいけません|てはいけない|"
    r"てはいけません|てはならない|ないでください|ないで下さい|しないで|ないこと|禁止|必ず|絶対に|"
    r"決して|常に",
    "ko": r"해야 합니다|해야 해|해야 한다|해야 돼|하지 마|지 마세요|지 마십시오|지 말고|지 말아|"
    r"금지|반드시|절대|항상",
    "es": r"\b(?:debes|debe|deben|debéis|tienes que|tenéis que|hay que|es obligatorio|está "
    r"prohibido|no se debe|se debe)\b",
    "fr": r"\b(?:il faut|il ne faut|tu dois|vous devez|doit|doivent|il est interdit|interdit de|"
    r"obligatoire)\b",
    "de": r"\b(?:muss|musst|müssen|müsst|darf nicht|darfst nicht|dürfen nicht|dürft nicht|"
    r"verboten|auf keinen fall)\b",
    "pt": r"\b(?:deve|devem|tem que|têm que|tem de|é proibido|é obrigatório)\b",
    "ru": r"(?<!\w)(?:должен|должна|должно|должны|нужно|надо|нельзя|обязательно|запрещено|"
    r"необходимо)(?!\w)",
}

#: Rule words that also describe: a rule only at the start of a clause.
ADVERB_WORDS: dict[Language, str] = {
    "en": r"\b(?:never|always|only|don'?t|do not|make sure|ensure|avoid)\b",
    "es": r"\b(?:nunca|jamás|siempre|únicamente|asegúrate|asegúrese|evita|evite)\b",
    "fr": r"\b(?:jamais|toujours|uniquement|seulement|assure-toi|assurez-vous|évite|évitez)\b",
    "de": r"\b(?:niemals|immer|stelle sicher|stell sicher|stellt sicher|vermeide|vermeidet|"
    r"achte darauf)\b",
    "pt": r"\b(?:sempre|apenas|somente|certifique-se|garanta|evite)\b",
    "ru": r"(?<!\w)(?:никогда|всегда|только|убедись|убедитесь|избегай|избегайте)(?!\w)",
}

#: A prohibition at the start of a clause.
NEGATIVE_IMPERATIVES: dict[Language, str] = {
    "fr": r"\b(?:ne\s+[\w-]+|n['’][\w-]+)\s+(?:pas|jamais|rien|plus)\b",
    "pt": r"\bn[ãa]o\s+\w+",
    "ru": r"(?<!\w)не\s+\w+(?:й|йте|и|ите)(?!\w)",
}

#: Entries that read as English words too (``no uses`` …, ``nur``, ``solo``): they count only
#: in a conversation of their language.
GATED: dict[Language, str] = {
    "es": r"\b(?:no\s+\w+(?:es|as)|solo|sólo)\b",
    "de": r"\b(?:nie|nur|keine?[nmrs]?|nichts|nicht)\b",
    "pt": r"\bsó\b",
}

#: Verbs that state a standing preference at the start of a sentence, without a rule word.
IMPERATIVE_WORDS: dict[Language, str] = {
    "en": r"^(?:use|target|prefer|keep|stick to|follow|indent with|support|pin|limit|stay on|"
    r"stay within|leave|name|format with|write (?:tests|docs|comments|code) in|build for|"
    r"run on)\s+[\w`'\"]|^(?:switch|move|change|go back|upgrade|migrate) to\s+\S.*\b(?:from now "
    r"on|from here on|going forward|henceforth|instead|anymore|no longer|everywhere|for (?:all|"
    r"every|the rest))\b",
    "zh": r"^(?:(?:从现在开始|从现在起|今后|以后|接下来)[，,、]?\s*)?(?:请)?"
    r"(?:使用|用|保持|坚持用)|改用|换用|换成|改为|统一用|统一使用",
    "ja": r"を使って|を使用して|を使うこと|を使ってください|にしてください|に変更して|に切り替えて",
    "ko": r"사용해|사용하세요|사용하십시오|써 주세요|써줘|로 바꿔|으로 바꿔|로 해 주세요|"
    r"으로 해 주세요",
    "es": r"^(?:usa|utiliza|usad|utilizad|use|utilice|mantén|mantened|mantenga|cambia a|pasa a|"
    r"cámbiate a)\s+\S",
    "fr": r"^(?:utilise|utilisez|emploie|employez|garde|gardez|passe à|passez à|reste sur|"
    r"restez sur|cible|ciblez)\s+\S",
    "de": r"^(?:verwende|verwendet|benutze|benutzt|nutze|nutzt|nimm|nehmt|bleib bei|bleibt bei|"
    r"wechsle zu|wechselt zu|wechsle auf|stell auf)\s+\S",
    "pt": r"^(?:use|usa|utilize|utiliza|mantenha|mude para|passe a usar|continue usando)\s+\S",
    "ru": r"^(?:используй|используйте|применяй|применяйте|оставь|оставьте|переключись на|"
    r"переключитесь на|перейди на|перейдите на|ставь|собирай под)\s+\S",
}

#: The sentence replaces an earlier rule.
REPLACES_WORDS: dict[Language, str] = {
    "en": r"\b(?:from now on|instead|no longer|any ?more|actually|switch(?:ing)? to|change of "
    r"plans?|rather than|going forward|henceforth|scratch that|forget (?:that|what i said|the)|"
    r"not anymore|from here on|no more|stop using)\b|^update:",
    "zh": r"从现在开始|从现在起|今后|以后|改用|改成|改为|换成|不再|而不是|其实|算了|忘掉|忘记|"
    r"现在可以",
    "ja": r"これからは|今後は|以降は|今からは|代わりに|ではなく|じゃなくて|もう|やっぱり|実は|"
    r"に変更|に切り替え|忘れて",
    "ko": r"이제부터|앞으로는|지금부터|이제는|대신|말고|더 이상|사실은|바꿔|잊어",
    "es": r"\b(?:a partir de ahora|de ahora en adelante|desde ahora|en adelante|en lugar de|"
    r"en vez de|ya no|en realidad|cambia a|olvida|olvídate)\b",
    "fr": r"\b(?:à partir de maintenant|désormais|dorénavant|au lieu de|au lieu d|plutôt que|"
    r"en fait|finalement|passe à|passez à|oublie|oubliez)\b|\bne\s+\w+\s+plus\b",
    "de": r"\b(?:ab jetzt|von nun an|ab sofort|ab hier|stattdessen|statt|anstatt|anstelle|"
    r"nicht mehr|keine? mehr|eigentlich|wechsle|vergiss|vergesst)\b",
    "pt": r"\b(?:a partir de agora|de agora em diante|daqui (?:para|pra) frente|em vez de|"
    r"ao invés de|na verdade|mude para|esqueça|esquece)\b|\bn[ãa]o\s+\w+\s+mais\b",
    "ru": r"(?<!\w)(?:с этого момента|отныне|теперь|впредь|вместо|больше не|на самом деле|"
    r"переключись|перейди|забудь|забудьте)(?!\w)",
}

#: A permission that lifts an earlier prohibition.
PERMITS_WORDS: dict[Language, str] = {
    "en": r"^(?:you (?:can|may)(?: now| again)?\b.*\b(?:now|again|from now on|from here on|"
    r"going forward)\b|you (?:can|may) (?:now|again)\b|you may\b|feel free to\b|"
    r"it'?s (?:fine|ok(?:ay)?|allowed) (?:now )?to\b|you(?:'re| are) (?:now )?allowed to\b)",
    "zh": r"现在可以|可以.*了|允许",
    "ja": r"てもいい|てもよい|て構いません|てもかまいません|てもOK",
    "ko": r"해도 돼|해도 됩니다|해도 괜찮",
    "es": r"^(?:ya puedes|ahora puedes|puedes\b.*\b(?:ahora|ya)\b|ya podéis|ahora podéis)",
    "fr": r"^(?:tu peux|vous pouvez)\b.*\b(?:maintenant|désormais|à nouveau)\b|"
    r"^n'hésite(?:z)? pas à",
    "de": r"^(?:du kannst|ihr könnt|sie können|du darfst|ihr dürft)\b.*"
    r"\b(?:jetzt|wieder|ab jetzt)\b",
    "pt": r"^(?:agora (?:você )?pode|(?:você )?pode\b.*\bagora\b|podes agora)",
    "ru": r"^(?:теперь можно|теперь (?:ты )?можешь|можно (?:теперь|снова)|можешь теперь)",
}

#: An earlier rule is lifted (``you no longer need to …``, ``… is no longer required``).
LIFTS_WORDS: dict[Language, str] = {
    "en": r"\bno longer\s+(?:need(?:ed)?|have to|must|required|necessary|use|support|apply|"
    r"applies|matters?|care)\b|\b(?:is|are) no longer\s+(?:needed|required|necessary|"
    r"mandatory|a rule|in force)\b|\bnot (?:needed|required|necessary) any ?more\b|"
    r"\b(?:don'?t|do not) (?:need to|have to)\b.*\bany ?more\b",
    "zh": r"不再需要|不用再|不必再|不需要再",
    "ja": r"もう必要ありません|もう不要|しなくてもいい|しなくてもよい",
    "ko": r"더 이상 필요 없|안 해도 돼|안 해도 됩니다",
    "es": r"\bya no (?:es necesario|hace falta|hay que|tienes que|necesitas|debes)\b",
    "fr": r"\b(?:n'est|ne sont) plus (?:nécessaire|obligatoire)s?\b|\b(?:tu n'as|vous n'avez) "
    r"plus besoin\b|\bplus besoin de\b",
    "de": r"\bnicht mehr (?:nötig|notwendig|erforderlich)\b|\b(?:musst|müsst|brauchst|braucht) "
    r"(?:\w+ )?nicht mehr\b",
    "pt": r"\bnão (?:é|precisa) mais\b|\bnão (?:precisa|tem que) mais\b",
    "ru": r"(?<!\w)больше не (?:нужно|надо|обязательно|требуется)(?!\w)",
}

#: Words that end the name of what is replaced (``instead of axios for the HTTP calls``).
_ENDS_WHAT = (
    r"for|in|on|at|with|from|to|when|because|since|so|as|and|or|but|if|the|a|an|now|here|"
    r"para|por|en|con|pour|dans|avec|sur|et|für|mit|im|und|bei|em|com|no|na|e|для|в|с|на|и"
)


def _what(group: str) -> str:
    """What a rule names as replaced, in group ``group``: one or two words, after an optional
    article, the second not one of :data:`_ENDS_WHAT`."""
    return (
        r"(?:(?:the|a|an|our|my|el|la|los|las|le|les|der|die|das|o|os|as)\s+)?"
        rf"(?P<{group}>[\w.+#/@'-]+(?:\s+(?!(?:{_ENDS_WHAT})\b)[\w.+#/@'-]+)?)"
    )


_WHAT = _what("what")
_WHAT_CJK = r"\s?(?P<what>(?:[^，。；、,.;:：!?！？\s]|(?<=\d)\.(?=\d)){1,12})"
#: A pattern naming what a later rule replaces, in its group ``what``.
REVOKES_WORDS: dict[Language, str] = {
    "en": rf"\b(?:instead of|rather than|in place of)\s+{_WHAT}|"
    r"\b(?:forget|ignore|drop|scrap|disregard)\s+(?:about\s+)?(?:the|my|that|this|our|any)?\s*"
    r"(?P<what2>[\w.+#/-]+(?:\s+[\w.+#/-]+){0,2}?)\s+(?:rule|requirement|constraint|"
    r"instruction|restriction|policy)s?\b|"
    rf"\b(?:no (?:more|longer)|stop using|switch(?:ing)? from)\s+{_what('what3')}",
    "zh": rf"(?:而不是|代替|不再用|不再使用|不要再用|不要再使用|不用){_WHAT_CJK}",
    "ja": r"(?P<what>[^，。；、,.;:：!?！？\s]{1,12})\s?"
    r"(?:ではなく|じゃなくて|の代わりに|のルールは忘れて)",
    "ko": r"(?P<what>\S+?)\s*(?:대신|말고)",
    "es": rf"\b(?:en lugar de|en vez de|ya no)\s+{_WHAT}|"
    r"\bolvida(?:te)?\s+(?:de\s+)?(?:la regla de(?:l)?|lo de)\s+(?P<what2>[\w.+#/-]+)",
    "fr": rf"\b(?:au lieu de|au lieu d['’]|plutôt que)\s*{_WHAT}|"
    r"\boublie(?:z)?\s+la règle\s+(?:de|des|du|sur)\s+(?P<what2>[\w.+#/-]+)",
    "de": rf"\b(?:statt|anstatt|anstelle von)\s+{_WHAT}|"
    r"\bvergiss\s+die\s+(?P<what2>[\w.+#/]+?)-?regel\b",
    "pt": rf"\b(?:em vez de|ao invés de|no lugar de)\s+{_WHAT}|"
    r"\besqueça\s+a regra\s+(?:de|do|da|dos|das)\s+(?P<what2>[\w.+#/-]+)",
    "ru": rf"(?<!\w)вместо\s+{_WHAT}|"
    r"(?<!\w)забудь(?:те)?\s+(?:про|о|об)\s+(?:правило\s+)?(?P<what2>[\w.+#/-]+)",
}

#: Words before an imperative that do not change it.
LEAD_WORDS: dict[Language, str] = {
    "en": r"please|pls|just|also|and|but|or|then|so|now|ok|okay|really|simply|absolutely|"
    r"actually|instead|from now on|going forward|from here on|henceforth|remember to|"
    r"be sure to|i want you to|i'd like you to|you(?:'ll| will| should| must| need to|"
    r" have to)+|we(?:'ll| will| should| must| need to| have to)+|let's|lets|"
    r"important|note|rule|rules",
    "es": r"por favor|también|y|pero|luego|ahora|a partir de ahora|de ahora en adelante|"
    r"en realidad",
    "fr": r"s'il te plaît|s'il vous plaît|aussi|et|mais|puis|maintenant|désormais|dorénavant|"
    r"à partir de maintenant|en fait",
    "de": r"bitte|auch|und|aber|dann|jetzt|ab jetzt|von nun an|ab sofort|eigentlich",
    "pt": r"por favor|também|e|mas|depois|agora|a partir de agora|de agora em diante|"
    r"na verdade",
    "ru": r"пожалуйста|также|тоже|и|но|а|потом|теперь|с этого момента|отныне|впредь|"
    r"на самом деле",
}

_FLAGS = re.IGNORECASE
MODAL = re.compile(_join(MODAL_WORDS), _FLAGS)
ADVERB = re.compile(_join(ADVERB_WORDS), _FLAGS)
NEGATIVE = re.compile(_join(NEGATIVE_IMPERATIVES), _FLAGS)
GATED_PATTERNS: dict[Language, re.Pattern[str]] = {
    lang: re.compile(source, _FLAGS) for lang, source in GATED.items()
}
IMPERATIVE = re.compile(_join(IMPERATIVE_WORDS), _FLAGS)
REPLACES = re.compile(_join(REPLACES_WORDS), _FLAGS | re.MULTILINE)
PERMITS = re.compile(_join(PERMITS_WORDS), _FLAGS)
LIFTS = re.compile(_join(LIFTS_WORDS), _FLAGS)
REVOKES: tuple[re.Pattern[str], ...] = tuple(
    re.compile(source, _FLAGS) for source in REVOKES_WORDS.values()
)
LEAD = re.compile(
    r"(?:^|(?<=\s))(?:" + _join(LEAD_WORDS) + r")[\s,.!:*_]*$",
    _FLAGS,
)
#: Lead words opening a clause.
LEAD_START = re.compile(r"^(?:" + _join(LEAD_WORDS) + r")(?![\w'])[\s,.!:*_]*", _FLAGS)
#: Every rule word of every language, for a first look at a sentence.
ANY_RULE_WORD = re.compile(
    "|".join(
        p
        for p in (
            _join(MODAL_WORDS),
            _join(ADVERB_WORDS),
            _join(NEGATIVE_IMPERATIVES),
            _join(GATED),
        )
    ),
    _FLAGS,
)

__all__ = [
    "ADVERB",
    "ADVERB_WORDS",
    "ANY_RULE_WORD",
    "GATED",
    "GATED_PATTERNS",
    "IMPERATIVE",
    "IMPERATIVE_WORDS",
    "LEAD",
    "LEAD_START",
    "LEAD_WORDS",
    "LIFTS",
    "LIFTS_WORDS",
    "MODAL",
    "MODAL_WORDS",
    "NEGATIVE",
    "NEGATIVE_IMPERATIVES",
    "PERMITS",
    "PERMITS_WORDS",
    "REPLACES",
    "REPLACES_WORDS",
    "REVOKES",
    "REVOKES_WORDS",
]
