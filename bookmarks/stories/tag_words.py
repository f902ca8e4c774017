"""The words speech tags are read with: speech verbs and verb phrases, the nouns that name
a person (`the jailer`), and the words that are never a name. Data only; `tags.py` builds its
patterns from them."""

from __future__ import annotations

VERBS = sorted(set("""
said say says asked asks replied replies answered answers returned cried cries exclaimed shouted
shouts screamed whispered whispers muttered mutters murmured murmurs called added adds continued
began begins resumed remarked observed interrupted repeated pleaded suggested explained declared
protested retorted roared growled grumbled sighed laughed snapped thought inquired enquired
demanded insisted urged persisted proceeded ventured echoed gasped sobbed stammered faltered
rejoined agreed admitted responded groaned moaned yelled bawled hissed panted mused commented
concluded corrected conceded complained warned wondered shrieked squeaked snorted sneered
thundered bellowed barked grunted drawled chuckled giggled breathed counted urged recited
announced screeched wailed whimpered blurted stuttered mumbled croaked piped chimed called
reasoned argued objected assented exploded jeered mocked scoffed teased queried questioned
promised explained greeted shouted sang recommended cautioned scolded stormed raged
saying shouting crying calling whispering muttering murmuring repeating screaming exclaiming
asking answering replying singing roaring sobbing gasping begun told tells ejaculated
expostulated remonstrated interposed pursued acknowledged assured rejoined vociferated
informed ask reply answer add exclaim observe remark whisper murmur
advised volunteered corroborated attested vouchsafed confided hazarded prompted lamented
implored entreated begged besought coaxed soothed purred gushed quavered trilled lisped
quoted reminded hinted commanded apologized apologised snarled whined wheezed intoned requested
babbled chattered simpered spluttered sputtered boomed cooed crowed exulted re-echoed
retorts answers rejoins remarks observes adds cries whimpers mutters vowed vow protest quoth
""".split()), key=len, reverse=True)  # bare forms: `Not till then did Miss Bartlett reply:`
PHRASES = ["went on", "goes on", "cried out", "called out", "put in", "broke in", "chimed in",
            "cut in", "struck in", "chipped in",
            "burst out", "broke out", "spoke up", "ventured to ask", "ventured to say",
            "ventured to remark", "called back", "shouted back", "answered back", "snapped back",
            "fired back", "had begun", "was beginning", "spoke", "began again", "broke into",
            "took an opportunity of saying", "took the opportunity of saying", "took occasion to say",
            "took the opportunity to say", "took an opportunity to say",
            *(f"{lead} to {say}" for lead in ("hastened", "hurried", "made haste", "managed")
              for say in ("say", "ask", "add", "reply", "answer", "explain", "assure her",
                          "assure him"))]  # `Edna hastened to say.`

PERSON_NOUNS = frozenset("""
man woman gentleman lady boy girl child lad lass youth maid maiden nephew niece uncle aunt
mother father sister brother son daughter wife husband cousin grandmother grandfather
granny landlady landlord host hostess doctor captain clerk servant visitor guest
king queen prince princess duke duchess master mistress housekeeper cook nurse gardener
major colonel professor judge inspector sergeant lieutenant officer soldier sailor
parson vicar rector priest widow baby infant friend companion
lawyer butler footman coachman waiter porter clergyman curate bishop surgeon
physician chemist farmer shepherd merchant student governess policeman constable detective
secretary knight squire boatman ferryman fisherman beggar pedlar innkeeper
driver cabman shopman shopkeeper tradesman grocer baker butcher carpenter seaman steward
stewardess conductor janitor housemaid chambermaid valet postman milkman newsboy waitress
barmaid magistrate monk nun teacher schoolmaster schoolmistress tutor fellow chap kid
youngster newcomer traveller traveler passenger tramp peasant villager labourer laborer
workman miner miller hunter sheriff prebendary canon chancellor dean archdeacon
guard warder jailer gaoler sentry sentinel watchman
""".split())
STOP_WORDS = frozenset("""
the a an and but or nor for so yet then than that this these those there here when where
while what which who whom whose why how if unless until till after before as at by in into
of off on onto out over to too up upon with within without from once now never ever always
oh ah o yes no not nay well why indeed perhaps still just only even again also very quite
he she it they we you i me him her them us my his its our your their mine hers ours theirs
one some any all both each every either neither
no none nobody nothing somebody someone something anybody anyone anything everybody everyone
suddenly presently meanwhile afterwards later soon instantly dear poor old young little good
whereupon thereupon hereupon whereat thereat wherefore therefore thus hence however moreover
accordingly nevertheless nonetheless otherwise besides finally lastly next first
chapter book part volume mrs mr miss ms dr sir lady lord madam god heaven
january february march april june july august september october november december
monday tuesday wednesday thursday friday saturday sunday
unlike like despite beside beyond toward towards amid amidst among amongst throughout underneath
although though whereas whilst
""".split())
