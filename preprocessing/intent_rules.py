"""Rule-based intent classification: weighted regex cues per intent, softmaxed into probabilities."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from preprocessing.bounds import INTENT_CHARS, text_prefix

INTENTS = ("SAVE_PREFERENCE", "SAVE_DECISION", "SAVE_FACT", "RECALL_INFO", "UPDATE_INFO", "QUESTION")

PREFERENCE, DECISION, FACT, RECALL, UPDATE, QUESTION = INTENTS


@dataclass(frozen=True)
class IntentPrediction:
    intent: str
    confidence: float
    all_probs: dict[str, float]
    source: str


# Scores are log-odds-like evidence; a strong, unambiguous cue is worth ~2.5 and a
# suggestive one ~1. QUESTION starts ahead because it is the "no memory action"
# default: a message with no cue at all must not be saved.
_PRIOR = {PREFERENCE: 0.0, DECISION: 0.0, FACT: 0.0, RECALL: 0.0, UPDATE: 0.0, QUESTION: 0.8}
# Dividing by a temperature below 1 sharpens the softmax so a clear 2-point lead reads
# as a confident (~0.8) prediction rather than a near-uniform one.
_TEMPERATURE = 0.6

# An update restates a fact, preference or decision with a change marker, so once the
# change marker is clear, that save evidence counts for the update too ("my new address
# is 12 Rose St" is a fact about an address *and* a correction).
_UPDATE_MARKER_MIN = 1.5
_UPDATE_SHARE = 0.6

# A message that is itself a question can still be a recall ("what's my…?") but is
# almost never a statement to save.
_QUESTION_PENALTY = {PREFERENCE: -1.8, DECISION: -1.8, FACT: -1.8, UPDATE: -1.8}

_CUES: dict[str, list[tuple[str, float]]] = {
    PREFERENCE: [
        (
            r"\bi(?:'d| would)? (?:really |much |strongly |generally |usually |still |definitely )?(?:prefer|"
            r"rather)\b",
            2.6,
        ),
        (r"\b(?:prefer|prefers|preferred) (?:\w+ ){0,3}(?:over|to|instead of)\b", 1.0),
        (
            r"\bi (?:really |absolutely |kind of |kinda |genuinely |just |do )?(?:like|love|enjoy|adore|hate|"
            r"dislike|detest|loathe)\b",
            2.3,
        ),
        (r"\bi (?:can't|cannot|can not) stand\b", 2.3),
        (r"\bi (?:don't|do not|never) (?:really )?(?:like|love|enjoy|care for)\b", 2.3),
        (r"\bmy (?:favou?rite|preferred|go-to|least favou?rite)\b", 2.6),
        (r"\bi(?:'m| am) (?:a (?:big |huge |massive )?fan of|not a fan of|not into|really into|into)\b", 2.2),
        (
            r"\bi (?:always|never|usually|typically|normally|tend to|generally) (?!said|told|mentioned|forget|"
            r"remember)\w+",
            1.9,
        ),
        (r"^(?:please,? )?(?:always|never(?! mind)|don't ever|do not ever)\b", 2.2),
        (
            r"\b(?:please )?(?:don't|do not|never) (?:use|add|include|suggest|put|write|"
            r"recommend)\b.{0,60}\b(?:for me|in (?:your|the) (?:answers|replies|responses|code))\b",
            1.6,
        ),
        (
            r"\b(?:when|whenever) (?:you )?(?:write|writing|give|giving|answer|answering|reply|replying|respond|"
            r"suggest|show|explain)\w*\b.{0,60}\b(?:use|keep|include|avoid|don't|do not|prefer|stick to)\b",
            1.8,
        ),
        (r"\bkeep (?:your |the |all )?(?:answers|replies|responses|explanations|messages)\b", 1.8),
        (r"\b(?:works?|suits?) (?:better|best) for me\b", 1.6),
        (r"\bi (?:work|code|think|write|sleep) best\b", 1.6),
        (r"\b(?:is|are) (?:my|our) (?:favou?rite|preference|go-to)\b", 2.2),
        (r"\bnot my (?:thing|cup of tea|style)\b", 1.8),
        (
            r"\bi(?:'m| am) (?:much |way |far |a lot )?(?:more|less) (?:productive|comfortable|effective|focused|"
            r"happy|relaxed) (?:with|in|when|using|if)\b",
            2.2,
        ),
        (r"\b[\w.+#-]+ over [\w.+#-]+\b.{0,20}\b(?:for me|please)\b", 2.0),
        (
            r"\b(?:anything|everything|whatever|all (?:the )?\w+) you (?:write|make|generate|produce|send|suggest|"
            r"draft) (?:for me|me)\b",
            2.0,
        ),
        (r"\b(?:whenever possible|when possible|if at all possible|by default)\b", 1.6),
        (r"\bi find (?:it )?\w+", 1.0),
        (r"\b\w+ only\s*[.!]*$", 0.8),
        (r"\b(?:drives? me (?:nuts|crazy|mad|insane|up the wall)|annoys? me|bugs? me|irritates? me)\b", 2.0),
        (r"\bfavou?rite\b", 1.0),
        (r"\b(?:always|every time|never)\s*[.!]*$", 1.4),
        (r"\bi(?:'m| am) (?:more )?(?:a morning|a night|an early) (?:person|owl|bird)\b", 1.6),
    ],
    DECISION: [
        (
            r"\b(?:i|we)(?:'ve| have| had)? (?:finally |just |already )?(?:decided|chose|chosen|picked|selected|"
            r"settled on|opted|agreed|committed to|landed on|signed off on|voted)\b",
            2.7,
        ),
        (
            r"\b(?:i|we)(?:'re| are|'m| am) (?:definitely |officially )?(?:going with|going to go with|"
            r"sticking with|moving forward with|committing to|opting for|settling on|standardi[sz]ing on)\b",
            2.7,
        ),
        (
            r"\blet's (?:go with|use|pick|choose|stick with|adopt|settle on|switch to|go ahead|move forward|"
            r"standardi[sz]e on|ship|launch|do|keep)\b",
            2.3,
        ),
        (
            r"\b(?:i|we)(?:'ll| will| shall) (?:go with|use|stick with|adopt|pick|standardi[sz]e on|move to|"
            r"migrate to|ship|launch|switch to|drop|deprecate|postpone|skip)\b",
            2.0,
        ),
        (r"\bgoing forward,? (?:we|i)(?:'ll| will)\b", 2.2),
        (
            r"\b(?:we|i)(?:'re| are|'m| am) (?:going to|gonna) (?:use|adopt|migrate|build|ship|launch|go|switch|"
            r"move|deploy|release|rewrite|drop|postpone|cancel)\b",
            2.0,
        ),
        (r"\b(?:the |our |my )?(?:decision|plan|verdict|call|consensus|conclusion) (?:is|was) (?:to|that|we)\b", 2.4),
        (r"\b(?:final decision|decision made|it's decided|it is decided|that's settled|that settles it|decided:)", 2.6),
        (
            r"\bwe(?:'re| are) (?:not going to|not gonna|dropping|abandoning|killing|postponing|deferring|"
            r"sunsetting)\b",
            1.9,
        ),
        (r"^(?:decision|decided|verdict|resolution|agreed|conclusion)\s*[:\-]", 2.6),
        (r"\b(?:decided|voted|agreed|chose|opted|resolved|committed) (?:to|on|for)\b", 2.0),
        (r"\b(?:i|we)(?:'re| are|'m| am) (?:going to|gonna) \w+", 1.4),
        (r"\b(?:approved|green-?lit|greenlit|rejected the|vetoed)\b", 1.4),
        (r"^\s*(?:ok(?:ay)?,? )?(?:\w+ )?it is\.?!?$", 1.6),
        (r"\b(?:go|went|going) with\b", 0.8),
        (r"^(?:going|go) with\b", 1.8),
        (r"\b(?:i|we) (?:will not|won't|shall not) \w+", 1.8),
        (r"\b(?:picked(?! up)|chose|selected|settled on|opted for|signed off on)\b", 1.8),
        (
            r"\b(?:i|we)(?:'m| am|'re| are) (?:buying|getting|taking|booking|hiring|adopting|ordering|"
            r"switching to|moving to)\b",
            1.6,
        ),
    ],
    FACT: [
        (
            r"\bmy (?!favou?rite\b|preferred\b|go-to\b|question\b|bad\b|mistake\b)(?:[\w'-]+ ){0,3}(?:is|are|was|"
            r"lives|works|runs|has|have|uses|sits|starts|ends|'s)\b",
            1.7,
        ),
        (
            r"\bour (?!favou?rite\b)(?:[\w'-]+ ){0,3}(?:is|are|runs|lives|uses|sits|has|have|hosts|deploys|ships|"
            r"changes|rotates|starts|ends|meets|happens|renews|expires|costs|takes|'s)\b",
            1.7,
        ),
        (r"\bmy (?:[\w'-]+ ){1,2}[a-z]+s (?:at|on|in|to|from|every|by|for)\b", 1.4),
        (
            r"\bmy (?:[\w'-]+ ){1,3}(?:goes|works|lives|plays|studies|teaches|owns|drives|attends|speaks|reports|"
            r"handles|leads|manages)\b",
            1.5,
        ),
        (
            r"\b(?:every|each) (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|day|week|month|quarter|"
            r"morning|sprint)\b",
            0.8,
        ),
        (
            r"\bi (?:work|live|am based|grew up|studied|was born|moved here|teach|report to|manage|lead|own|"
            r"maintain)\b",
            1.9,
        ),
        (r"\bi(?:'m| am) (?:a|an) (?!fan\b|big fan\b)\w+", 1.4),
        (
            r"\bi(?:'m| am) (?:based|located|from|allergic|vegetarian|vegan|married|engaged|pregnant|left-handed|"
            r"colou?r-?blind|in charge of|responsible for)\b",
            2.0,
        ),
        (r"\bi have (?:a|an|two|three|four|\d+)\b", 1.3),
        (r"\bi (?:speak|own|drive|rent|volunteer|coach|play) \w+", 1.8),
        (r"\bwe (?:use|run|host|deploy|have|keep|store|ship|build|pay for)\b", 1.6),
        (
            r"\b(?:is|are) (?:hosted|located|deployed|stored|running|based|kept|installed|configured|pinned|"
            r"scheduled) (?:on|in|at|to|for|under)\b",
            1.6,
        ),
        (r"\b(?:runs?|lives?|sits?) (?:on|in) (?:port|the|a|an|our|us-|eu-|aws|gcp|azure|k8s|kubernetes)\b", 1.3),
        (r"\b(?:on|uses?|listens on) port \d+\b", 1.3),
        (r"\bthe (?:[\w'-]+ ){0,3}(?:is|are) (?:on|in|at|hosted|called|named|located|due|set to|configured|\d)", 1.3),
        (r"^the [\w' -]{1,40} (?:is|are|has) \S", 0.8),
        (
            r"\b(?:password|address|phone|email|birthday|anniversary|account|ip|url|endpoint|version|deadline|"
            r"budget|id|number|timezone|time zone|name)\b.{0,25}\b(?:is|are)\b",
            0.9,
        ),
        (
            r"\b(?:wife|husband|partner|son|daughter|kids?|mom|mum|mother|dad|father|sister|brother|manager|boss|"
            r"colleague|co-?founder|dog|cat|team|landlord|doctor|dentist)\b",
            0.5,
        ),
        (r"\b(?:is|are) (?:due|scheduled|planned) (?:on|for|by|at)\b", 1.2),
        (r"\b(?:stands for|is short for|is an alias for)\b", 0.9),
        (r"\b(?:fyi|for the record|for future reference|for reference)\b", 1.0),
        (r"\b(?:is|are) (?:the )?(?:owner|lead|maintainer|point of contact|on-call|admin) (?:of|for)\b", 1.4),
    ],
    RECALL: [
        (
            r"\bwhat (?:did|do|have|had) (?:i|we) (?:ever )?(?:say|said|tell|told|mention|mentioned|decide|"
            r"decided|choose|chose|pick|picked|agree|agreed|note|noted|save|saved|discuss|discussed|call|name|"
            r"settle|use|used|prefer)\b",
            3.2,
        ),
        (r"\b(?:do|did) you (?:still )?(?:remember|recall|have (?:a |any )?(?:record|note|memory))\b", 3.2),
        (r"\bdo you (?:know|have) (?:what |when |where |which |who |how |if |whether )?(?:i|we|my|our)\b", 3.0),
        (r"\bremind me (?:again )?(?:what|when|where|which|who|whose|how|of|about|again|my|our)\b", 3.2),
        (r"\b(?:can|could|would) you (?:remind|tell) me (?:again )?(?:what|when|where|which|who|how|my|our)\b", 2.0),
        (r"\b(?:remind|tell) me (?:again )?(?:what|when|where|which|who|how)\b.{0,30}\b(?:my|our|i|we)\b", 2.0),
        (r"\bwhat (?:was|were) (?:my|our|that|those|the one|it|his|her|their|the name)\b", 2.6),
        (r"\bwhat (?:was|were) the\b", 1.0),
        (r"\b(?:what|where|when|which|who|how)(?:'s| is| are|'re| was| were) (?:my|our)\b", 3.0),
        (
            r"\b(?:which|what) (?:[\w-]+ ){1,3}(?:did|do|have) (?:i|we) (?:use|pick|choose|prefer|like|say|decide|"
            r"settle|go|mention|agree)\b",
            2.8,
        ),
        (
            r"\b(?:did|have) (?:i|we) (?:ever |already )?(?:mention|mentioned|tell you|told you|say|said|decide|"
            r"decided|agree|agreed|talk about|talked about|cover|covered|discuss|discussed|note|noted|share|"
            r"shared)\b",
            3.0,
        ),
        (
            r"\b(?:earlier|before|last time|previously|the other day|last week|yesterday)\b.{0,40}\b(?:i|we|"
            r"you) (?:said|mentioned|told|decided|discussed|noted|talked|agreed)\b",
            2.2,
        ),
        (
            r"\b(?:i|we) (?:said|mentioned|told you|discussed|noted|decided)\b.{0,40}\b(?:earlier|before|"
            r"last time|previously|the other day|last week|yesterday)\b",
            2.2,
        ),
        (r"\bagain\s*\?", 1.4),
        (
            r"\b(?:look up|pull up|retrieve|recall|fetch|find)\b.{0,30}\b(?:what (?:i|we)|my notes?|our notes?|"
            r"memor(?:y|ies)|saved|stored)\b",
            3.2,
        ),
        (r"\bwhat do you (?:know|remember) about (?:me|my|our|us)\b", 3.2),
        (
            r"\b(?:what|everything|anything) (?:do |did )?you (?:remember|recall|know|have (?:saved|stored|"
            r"noted)) (?:about|regarding|on|of)\b",
            3.2,
        ),
        # A wh-question about the user's own world ("what's the name of my dentist?")
        # can only be answered from memory; how/why/should questions ask for help instead.
        (
            r"^(?:what|which|who|whom|whose|where|when(?='s| is| was| are| were| did| do|"
            r" does))\b(?!.*\b(?:should|can|could|would|shall|might|do i need|does it|if|happens?|good|best|"
            r"why)\b).*\b(?:my|our|we|i|me|us)\b.*\?\s*$",
            2.6,
        ),
        (
            r"\b(?:last|previous|earlier|that) (?:meeting|call|conversation|chat|session|discussion|sync|standup|"
            r"retro)\b",
            1.2,
        ),
        (r"\bhow did (?:we|i) \w+", 2.2),
        (r"\b(?:do|did|d'|don't) ?(?:you|u)(?: still)? (?:remember|recall)\b", 3.0),
        (r"(?<!if )\byou (?:still )?(?:remember|recall)\b(?! (?:that|this)\b).*\?\s*$", 2.8),
        (
            r"\b(?:recall|remember)\b.*\b(?:i|we) (?:said|mentioned|told you|gave you|shared|recommended|"
            r"suggested|asked you|discussed|decided)\b",
            2.4,
        ),
        (r"\b(?:can|could) you (?:remember|recall) (?:what|which|when|where|who|how|if|whether)\b", 3.0),
        (r"^(?:hey,? |so,? |and )?recall\b", 2.8),
        (r"^(?:hey,? |so,? |and )?remember (?:what|which|when|where|who|how|if|whether)\b", 2.8),
        (r"^remember\b.*\?\s*$", 2.0),
        (r"\b(?:check|search|look in|look through|dig through) (?:your |the )?(?:memory|memories|notes)\b", 3.2),
        (r"\b(?:did|have) (?:we|i)\b.*\b(?:last time|before|earlier|previously|already)\b", 2.6),
        (
            r"^(?:what|which|who|where|when)(?:'s| is| was| were| did| do)\b.*\b(?:i|we) (?:said|mentioned|"
            r"told you|gave you|shared|recommended|suggested|asked you|called|named)\b",
            2.4,
        ),
        (r"\bwhat (?:are|were) (?:my|our) (?:preferences|decisions|notes|plans)\b", 1.0),
    ],
    UPDATE: [
        (
            r"^\s*(?:actually|correction|scratch that|wait|oops|sorry|update|change of plans?|small correction|"
            r"quick correction)\b",
            2.4,
        ),
        (r"\bactually\b", 1.6),
        (r"^no,? (?:not|it's|it is|it was)\b", 2.2),
        (r"\bno longer\b", 2.7),
        (r"\bany ?more\b", 2.2),
        (
            r"\b(?:moved|switched|migrated|changed|upgraded|downgraded|transferred|renamed|relocated|shifted|"
            r"rescheduled|pushed(?: back)?|postponed|bumped|swapped|converted|ported) (?:[\w'-]+ ){0,4}(?:to|from|"
            r"over to|over)\b",
            2.3,
        ),
        (
            r"\b(?:has|have|'ve|'s|is|was|were|got) (?:just )?(?:been )?(?:changed|moved|switched|updated|"
            r"replaced|renamed|deprecated|rescheduled|cancell?ed|retired|pushed|reassigned|migrated)\b",
            2.1,
        ),
        (r"\binstead\b", 1.4),
        (
            r"\b(?:i|we|they|he|she)(?:'ve| have)? (?:stopped|quit|gave up|replaced|swapped out|dropped|ditched|"
            r"retired)\b",
            2.0,
        ),
        # A trailing "now" marks a changed state: "I'm vegetarian now", "Julia leads it now".
        (r"(?<!for )(?<!right )(?<!just )\bnow\s*[.!]*$", 2.0),
        (r"\bnow [a-z]+s (?:at|on|in|to|from|for|with|every|by)\b", 1.8),
        (r"\b(?:forget|ignore|disregard) (?:what|everything|anything) (?:i|we) (?:said|told|mentioned|wrote)\b", 3.0),
        (r"\bagain\s*[.!]*$", 0.8),
        (r"\bfrom now on\b", 2.7),
        (r"\b(?:is|are) now\b", 1.9),
        (
            r"\bnow (?:use|uses|using|lives?|living|works?|working|runs?|running|at|on|in|prefer|prefers|owns?|"
            r"leads?|reports?|is|are|has|have|goes|points)\b",
            1.9,
        ),
        (r"\bnow\b", 0.5),
        (r"\b(?:it's|it is|that's|that is|he's|she's|they're) (?:not|no longer)\b", 1.2),
        (r"\b(?:update|change|correct|fix|set) (?:my|our|the|that|his|her) (?:[\w'-]+ ){0,3}(?:to|from)\b", 3.8),
        (r"\bi (?:meant|mean)\b.{0,40}\bnot\b", 2.0),
        (r"\bi meant\b", 1.2),
        (r"\b(?:i|we) (?:used to|previously|formerly)\b", 1.9),
        (
            r"\b(?:my|our) new\b|\bthe new (?:address|number|email|phone|password|deadline|date|time|manager|lead|"
            r"owner|plan|url|endpoint|host|port) (?:is|are)\b",
            2.8,
        ),
        (r"\bchanged (?:my|our) minds?\b", 2.6),
        (
            r"\b(?:i was wrong|i was mistaken|i misspoke|my mistake|my bad|that was wrong|that's wrong|"
            r"not correct|is outdated|out of date)\b",
            2.2,
        ),
        (r"\bnot \w+(?: \w+)?,? (?:but|it's|it is)\b", 1.0),
    ],
    QUESTION: [
        (r"\?\s*$", 1.0),
        (
            r"^(?:how|why|what|when|where|who|which|whose|is|are|can|could|would|should|do|does|did|will|shall|"
            r"may|am)\b",
            0.6,
        ),
        (r"\bhow (?:do|can|should|would|to|does|is)\b", 1.3),
        (
            r"^(?:please,? )?(?:write|explain|fix|generate|summari[sz]e|translate|create|make|help|show|list|"
            r"refactor|debug|draft|give|find|compare|convert|implement|build|add|rewrite|review|check|tell|"
            r"describe|calculate|plan|suggest|recommend|optimi[sz]e|run|test|edit|format|sort|clean|proofread|"
            r"outline|brainstorm|search|look|walk|set up|install|deploy|rename|delete|remove|update the code|"
            r"send)\b",
            2.2,
        ),
        (r"^(?:hey|hi|hello|ok(?:ay)?|so|now|quick question),? (?:can|could|would|will) you\b", 1.5),
        (r"^(?:can|could|would|will) you\b", 1.5),
        (r"^(?:hi|hello|hey|yo|good (?:morning|afternoon|evening|night)|howdy|greetings|sup|what's up|hiya)\b", 2.6),
        (r"\b(?:thanks|thank you|thx|ty|cheers|much appreciated|appreciate it|appreciate the help)\b", 2.6),
        (
            r"^(?:ok(?:ay)?|cool|nice|great|lol|haha|got it|awesome|perfect|bye|see you|good night|makes sense|"
            r"interesting|wow|hmm+|i see)\b[.!]*\s*$",
            2.0,
        ),
        (
            r"\b(?:i need|i want|i'd like|i would like|i'm trying|i am trying)(?: you)? (?:to|a|an|some|help|"
            r"ideas)\b",
            1.4,
        ),
        (r"\bhelp me\b", 1.6),
        (r"\bwhat(?:'s| is) (?:a|an|the difference|the best way)\b", 1.0),
        (r"\b(?:any|some) (?:ideas|suggestions|tips|advice)\b", 1.2),
        (r"\bhow are you\b", 2.0),
    ],
}

_COMPILED = {intent: [(re.compile(pattern), weight) for pattern, weight in cues] for intent, cues in _CUES.items()}
# Case carries two cues: names ("Priya owns billing", not "please owns") and
# named values ("the codename is Falcon", "the port is 5433", not "the weather is nice").
_NAMED_VALUE = re.compile(
    r"\b(?:[Tt]he|[Oo]ur|[Mm]y) [\w' -]{1,40} (?:is|are|lives|sits|runs|resides) (?:at |on |in |under )?"
    r"(?:[A-Z0-9]|\S*[._/@:]\S)"
)
_NAMED_VALUE_WEIGHT = 1.2
_PERSON_OWNS = re.compile(
    r"(?:^|[.;:,]\s+|\s)(?!(?:I|The|This|That|It|We|My|Our|He|She|They|You|Please|Then|There)\b)"
    r"[A-Z][a-z]+(?: [A-Z][a-z]+)? "
    r"(?:owns|leads|manages|maintains|runs|handles|approves|is responsible for|is in charge of|works on|works at|"
    r"works in|reports to|is our|is my|lives in|is on)\b"
)
_PERSON_OWNS_WEIGHT = 1.9

# "Remember that…", "make a note: …", "keep this in mind": the user hands over content
# to store. The frame itself is not a task request; the content decides which kind of
# save it is, and plain content is a fact. "Remember to…" and "do you remember…" are
# not frames (a task, a recall).
_SAVE_FRAME = re.compile(
    # Only at the start of a sentence, after polite lead-ins: "I don't remember the
    # syntax" and "he told me to remember that…" are not requests.
    r"(?:^|[.!?;:]\s+|[\u2014\u2013-]\s*|,\s*)"
    r"(?:(?:ok(?:ay)?|oh|and|also|btw|hey|so|please|pls|plz|kindly|just|can you|could you|will you|would you|"
    r"i want you to|i'd like you to|i need you to|you need to|you must|you should|always|make sure (?:you|to))[\s,]+)*"
    r"(?:remember|memori[sz]e|note|take note|make (?:a )?(?:mental )?note(?: of)?|write (?:this |that |it )?down|"
    r"jot (?:this |that |it )?down|keep (?:this|that|it) in mind|keep in mind|bear (?:this|that|it) in mind|bear in mind|"
    r"(?:don'?t|do not|never) forget|"
    r"(?:store|save|memori[sz]e|remember) (?:this|that|it|these|the following)(?: (?!in\b|to\b|as\b|on\b|into\b|with\b)\w+)?|"
    r"(?:add|commit) (?:this |that |it )?to (?:your )?(?:long-term |permanent )?memory|"
    r"put (?:this |that |it )?in(?:to)? (?:your )?(?:long-term |permanent )?memory|note to self|remember forever)"
    r"(?:\s+(?:this|that|of this|for later|for next time|for future sessions|forever|as a preference|to memory|"
    r"in your memory|for me|going forward|somewhere|please))*"
    # …followed by the content: "that …", a colon or dash, a first-person clause,
    # "the X is …", or nothing at all ("…. Save that.").
    r"\s*(?:\bthat\b|[:,?\-\u2013\u2014]|(?=\s+(?:my|our|i|i'm|i've|we|we're|we've)\b|\s+\"\w)"
    r"|(?=\s+the [\w' -]{1,40}? (?:is|are|was|has|have|lives|runs|needs|expires|starts|ends)\b)|(?=[.!]*\s*$))"
)
_SAVE_FRAME_FACT = 1.2  # framed content with no other cue is a fact
_RECALL_OVERRIDES_FRAME = 2.5  # a clear recall cue ("do you remember…") wins over a frame
_SAVE_UNDER_RECALL = 0.5

# Follow-up turns: a short reply that picks among options offered just before.
_AFFIRMATION = re.compile(
    r"^(?:yes|yeah|yep|yup|sure|ok(?:ay)?|alright|agreed|definitely|absolutely|sounds good|sounds great|perfect|"
    r"works for me|let's|lets|go with|the (?:first|second|third|last|former|latter|other)|option|that one|this one|"
    r"both|neither|no|nope|not|do it|do that|ship it|fine|deal|correct|right)\b"
)
_OFFERS_CHOICE = re.compile(
    r"\b(?:or|either|options?|alternatives?|which one|should (?:we|i)|shall (?:we|i)|do you want|would you (?:like|prefer|rather)|"
    r"how about|what about|want me to|go with|vs\.?|versus|pick|choose)\b"
)
# "Tea or coffee?" asked of the user is about taste; "should we use X or Y?" is about a choice.
_ASKS_PREFERENCE = re.compile(
    r"\byou\b.*\b(?:prefer|like|favou?rite|rather|enjoy)\b|\b(?:prefer|like|favou?rite|rather|enjoy)\b.*\byou\b"
)
_ASKS_DECISION = re.compile(r"\b(?:should we|shall we|go with|we use|adopt|migrate)\b")
_MAX_SELECTION_WORDS = 12
_SELECTION_WEIGHT = 3.2
_WORDS = re.compile(r"[\w.+#/-]+")
_FILLER = frozenset(
    "a an and are as at be but by do for from how i in is it of on or our should so that the this to we what which "
    "with you your would like prefer let's lets use go yes no ok okay one".split()
)


def _normalise(text: str) -> str:
    return " ".join(text.replace("\u2019", "'").replace("\u2018", "'").split())


class RuleIntentClassifier:
    """The always-available fallback: no model, deterministic, about 0.1 ms a message."""

    def classify(self, text: str, prior_turns: Sequence[str] = ()) -> IntentPrediction:
        scores = self.scores(text, prior_turns)
        probs = _softmax(scores)
        # Ties go to QUESTION: when the evidence is split, not saving is the safe default.
        best = max(INTENTS, key=lambda intent: (probs[intent], intent == QUESTION))
        return IntentPrediction(best, probs[best], probs, "rules")

    def scores(self, text: str, prior_turns: Sequence[str] = ()) -> dict[str, float]:
        """Raw evidence per intent before the softmax; useful when tuning cues."""
        # Intent shows in the opening of a message; the cap also bounds regex time on pastes.
        original = _normalise(text_prefix(text, INTENT_CHARS))
        lowered = original.lower()
        scores = _cue_scores(lowered)
        if scores[RECALL] >= _RECALL_OVERRIDES_FRAME:
            # In "do you remember my favourite colour?" the preference words are what is
            # being asked about, not something being said.
            for intent in (PREFERENCE, DECISION, FACT):
                scores[intent] *= _SAVE_UNDER_RECALL
        elif frame := _SAVE_FRAME.search(lowered):
            # Score what is to be stored, not the request around it ("could you…?").
            lowered = f"{lowered[:frame.start()]} {lowered[frame.end():]}".strip(" ?")
            scores = _cue_scores(lowered)
            scores[QUESTION] = _PRIOR[QUESTION]
            scores[FACT] += _SAVE_FRAME_FACT
        if _PERSON_OWNS.search(" " + original):
            scores[FACT] += _PERSON_OWNS_WEIGHT
        if _NAMED_VALUE.search(original):
            scores[FACT] += _NAMED_VALUE_WEIGHT
        if scores[UPDATE] >= _UPDATE_MARKER_MIN:
            scores[UPDATE] += _UPDATE_SHARE * max(scores[PREFERENCE], scores[DECISION], scores[FACT])
        if lowered.endswith("?"):
            for intent, penalty in _QUESTION_PENALTY.items():
                scores[intent] += penalty
        selection = _selection_intent(lowered, prior_turns)
        if selection:
            scores[selection] += _SELECTION_WEIGHT
        return scores


def _cue_scores(lowered: str) -> dict[str, float]:
    scores = dict(_PRIOR)
    for intent, cues in _COMPILED.items():
        scores[intent] += sum(weight for pattern, weight in cues if pattern.search(lowered))
    return scores


def _selection_intent(lowered: str, prior_turns: Sequence[str]) -> str | None:
    """SAVE_DECISION (or SAVE_PREFERENCE) when a short reply settles a choice offered in the last turn."""
    if not prior_turns or not lowered or lowered.endswith("?"):
        return None
    words = _WORDS.findall(lowered)
    if not words or len(words) > _MAX_SELECTION_WORDS:
        return None
    previous = _normalise(text_prefix(prior_turns[-1], INTENT_CHARS)).lower()
    if not _OFFERS_CHOICE.search(previous):
        return None
    # A reply that names one of the offered options ("Redis, definitely") is a pick
    # even without an affirmation word.
    offered = {w for w in _WORDS.findall(previous) if w not in _FILLER and len(w) > 1}
    names_option = any(w in offered for w in words if w not in _FILLER)
    if not (_AFFIRMATION.search(lowered) or names_option):
        return None
    if _ASKS_PREFERENCE.search(previous) and not _ASKS_DECISION.search(previous):
        return PREFERENCE
    return DECISION


def _softmax(scores: dict[str, float]) -> dict[str, float]:
    top = max(scores.values())
    weights = {intent: math.exp((scores[intent] - top) / _TEMPERATURE) for intent in INTENTS}
    total = sum(weights.values())
    return {intent: weights[intent] / total for intent in INTENTS}
