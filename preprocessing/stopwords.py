"""The one English stopword list: function words that carry no topic, shared by search terms, dedup and tags."""

# Negations ("not", "no", "never", "cannot") are left out on purpose: "we no longer use npm" and "we use npm" must not
# look alike to dedup or search. A component that wants them gone (tags) adds NEGATIONS itself.
STOPWORDS = frozenset(
    """
    a about above after again against all also am an and any are aren't as at be because been before being below
    between both but by can can't could couldn't did didn't do does doesn't doing don't down during each either else
    etc ever every few for from further get gets got had hadn't has hasn't have haven't having he he'd he'll he's her
    here here's hers herself him himself his how how's i i'd i'll i'm i've if in into is isn't it it's its itself
    just let let's may me might mine more most must mustn't my myself of off on once only onto or other ought our
    ours ourselves out over own per same shall shan't she she'd she'll she's should shouldn't so some such than that
    that's the their theirs them themselves then there there's these they they'd they'll they're they've this those
    through to too under until up upon us very via was wasn't we we'd we'll we're we've were weren't what what's when
    when's where where's which while who who's whom whose why why's will with won't would wouldn't you you'd you'll
    you're you've your yours yourself yourselves
    """.split()
)
NEGATIONS = frozenset("no nor not never none nothing nobody neither without cannot".split())
