"""The word tables of docs/corpus.md, keyed by the English word. Every form here is a contract: the
independent evaluation set uses exactly these forms."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Noun:
    fr: str
    fr_gender: str  # "m" | "f"
    de: str
    de_gender: str  # "m" | "f" | "n"
    de_gen: str  # genitive singular (`des Flusses`); feminine nouns do not change


def _n(fr: str, fr_gender: str, de: str, de_gender: str, de_gen: str = "") -> Noun:
    return Noun(fr, fr_gender, de, de_gender, de_gen or de)


NOUNS: dict[str, Noun] = {
    "cat": _n("chat", "m", "Katze", "f"),
    "dog": _n("chien", "m", "Hund", "m", "Hundes"),
    "mouse": _n("souris", "f", "Maus", "f"),
    "bird": _n("oiseau", "m", "Vogel", "m", "Vogels"),
    "horse": _n("cheval", "m", "Pferd", "n", "Pferdes"),
    "child": _n("enfant", "m", "Kind", "n", "Kindes"),
    "girl": _n("fille", "f", "Mädchen", "n", "Mädchens"),
    "man": _n("homme", "m", "Mann", "m", "Mannes"),
    "woman": _n("femme", "f", "Frau", "f"),
    "teacher": _n("professeur", "m", "Lehrer", "m", "Lehrers"),
    "doctor": _n("médecin", "m", "Arzt", "m", "Arztes"),
    "king": _n("roi", "m", "König", "m", "Königs"),
    "queen": _n("reine", "f", "Königin", "f"),
    "friend": _n("ami", "m", "Freund", "m", "Freundes"),
    "house": _n("maison", "f", "Haus", "n", "Hauses"),
    "garden": _n("jardin", "m", "Garten", "m", "Gartens"),
    "river": _n("rivière", "f", "Fluss", "m", "Flusses"),
    "bank": _n("banque", "f", "Bank", "f"),
    "table": _n("table", "f", "Tisch", "m", "Tisches"),
    "mat": _n("tapis", "m", "Matte", "f"),
    "book": _n("livre", "m", "Buch", "n", "Buches"),
    "letter": _n("lettre", "f", "Brief", "m", "Briefes"),
    "apple": _n("pomme", "f", "Apfel", "m", "Apfels"),
    "bread": _n("pain", "m", "Brot", "n", "Brotes"),
    "car": _n("voiture", "f", "Auto", "n", "Autos"),
    "city": _n("ville", "f", "Stadt", "f"),
    "street": _n("rue", "f", "Straße", "f"),
    "tree": _n("arbre", "m", "Baum", "m", "Baumes"),
    "door": _n("porte", "f", "Tür", "f"),
    "window": _n("fenêtre", "f", "Fenster", "n", "Fensters"),
    "loan": _n("prêt", "m", "Kredit", "m", "Kredits"),
}

# The bank rule: `bank` is the river bank iff `river` is in the same sentence.
RIVER_BANK = _n("rive", "f", "Ufer", "n", "Ufers")


@dataclass(frozen=True)
class Adjective:
    fr_m: str
    fr_f: str
    fr_before: bool  # French position: before the noun (`le petit chat`) or after (`le chat noir`)
    de_stem: str  # declined by adding -e / -en / -er / -es (`müd` for the spec's `müde`)
    fr_m_vowel: str = ""  # masculine form before a vowel (`vieil`, `bel`)


ADJECTIVES: dict[str, Adjective] = {
    "black": Adjective("noir", "noire", False, "schwarz"),
    "white": Adjective("blanc", "blanche", False, "weiß"),
    "red": Adjective("rouge", "rouge", False, "rot"),
    "green": Adjective("vert", "verte", False, "grün"),
    "happy": Adjective("heureux", "heureuse", False, "glücklich"),
    "tired": Adjective("fatigué", "fatiguée", False, "müd"),
    "big": Adjective("grand", "grande", True, "groß"),
    "small": Adjective("petit", "petite", True, "klein"),
    "old": Adjective("vieux", "vieille", True, "alt", "vieil"),
    "young": Adjective("jeune", "jeune", True, "jung"),
    "good": Adjective("bon", "bonne", True, "gut"),
    "beautiful": Adjective("beau", "belle", True, "schön", "bel"),
}


@dataclass(frozen=True)
class Verb:
    en: tuple[str, str, str]  # present 3sg, past, infinitive
    fr: tuple[str, str, str]  # present, passé simple, future (reflexive: without `s'`)
    de: tuple[str, str, str]  # present, past, infinitive (reflexive: without `sich`)
    transitive: bool
    reflexive: bool = False


VERBS: dict[str, Verb] = {
    "sleep": Verb(
        ("sleeps", "slept", "sleep"), ("dort", "dormit", "dormira"), ("schläft", "schlief", "schlafen"), False
    ),
    "sit": Verb(("sits", "sat", "sit"), ("assied", "assit", "assiéra"), ("setzt", "setzte", "setzen"), False, True),
    "bark": Verb(("barks", "barked", "bark"), ("aboie", "aboya", "aboiera"), ("bellt", "bellte", "bellen"), False),
    "run": Verb(("runs", "ran", "run"), ("court", "courut", "courra"), ("läuft", "lief", "laufen"), False),
    "sing": Verb(("sings", "sang", "sing"), ("chante", "chanta", "chantera"), ("singt", "sang", "singen"), False),
    "laugh": Verb(("laughs", "laughed", "laugh"), ("rit", "rit", "rira"), ("lacht", "lachte", "lachen"), False),
    "see": Verb(("sees", "saw", "see"), ("voit", "vit", "verra"), ("sieht", "sah", "sehen"), True),
    "chase": Verb(("chases", "chased", "chase"), ("chasse", "chassa", "chassera"), ("jagt", "jagte", "jagen"), True),
    "eat": Verb(("eats", "ate", "eat"), ("mange", "mangea", "mangera"), ("isst", "aß", "essen"), True),
    "read": Verb(("reads", "read", "read"), ("lit", "lut", "lira"), ("liest", "las", "lesen"), True),
    "write": Verb(
        ("writes", "wrote", "write"), ("écrit", "écrivit", "écrira"), ("schreibt", "schrieb", "schreiben"), True
    ),
    "love": Verb(("loves", "loved", "love"), ("aime", "aima", "aimera"), ("liebt", "liebte", "lieben"), True),
    "find": Verb(("finds", "found", "find"), ("trouve", "trouva", "trouvera"), ("findet", "fand", "finden"), True),
    "open": Verb(("opens", "opened", "open"), ("ouvre", "ouvrit", "ouvrira"), ("öffnet", "öffnete", "öffnen"), True),
    "take": Verb(("takes", "took", "take"), ("prend", "prit", "prendra"), ("nimmt", "nahm", "nehmen"), True),
}

TENSES = ("present", "past", "future")
TENSE_INDEX = {"present": 0, "past": 1, "future": 2}

# Place prepositions: (French, German). `near` before an article is `près de` (`près du`, `près de la`).
PREPOSITIONS: dict[str, tuple[str, str]] = {
    "on": ("sur", "auf"),
    "in": ("dans", "in"),
    "under": ("sous", "unter"),
    "near": ("près", "neben"),
    "with": ("avec", "mit"),
    "behind": ("derrière", "hinter"),
}
# German two-way prepositions take the accusative after a verb of movement (`sich setzen`); `mit` is
# always dative. `in` is not used with `sit` (it would need the contraction `ins`, not in the spec).
DE_TWO_WAY = frozenset({"auf", "in", "unter", "neben", "hinter"})
SIT_PREPOSITIONS = ("on", "under", "near", "with", "behind")


def starts_with_vowel(word: str) -> bool:
    """French elision trigger: a vowel or the mute h of `homme` / `heureux`."""
    return word[:1].lower() in "aeiouyéèêâîôûh"
