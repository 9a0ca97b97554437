package main

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Synthetic text for CrowdRAG-25: queries in the style of the TREC 2024 RAG
// topics, MS MARCO v2.1 segment-like reference passages (web text with
// typographic quotes, dashes, accented names, the odd emoji and URL) and
// crowd/LLM written answers with inline citation markers.

var crowdSubjects = []string{
	"vicarious trauma", "intermittent fasting", "the gig economy", "microplastics in drinking water",
	"remote work", "urban heat islands", "antibiotic resistance", "cryptocurrency regulation",
	"sleep deprivation", "social media use among teenagers", "electric vehicle batteries",
	"coral reef bleaching", "the four-day work week", "rising inflation", "student loan debt",
	"ocean acidification", "childhood obesity", "renewable energy subsidies", "online misinformation",
	"ultra-processed foods", "noise pollution", "affordable housing", "the Mediterranean diet",
	"imposter syndrome", "long COVID", "homeschooling", "e-waste recycling", "declining bee populations",
	"wildfire smoke", "minimum wage increases", "loneliness in older adults", "fast fashion",
	"screen time for toddlers", "compassion fatigue", "food deserts", "plastic bag bans",
	"nuclear power", "light pollution", "caffeine consumption", "gentrification", "vertical farming",
	"workplace burnout", "water scarcity", "invasive species", "esports", "universal basic income",
	"telemedicine", "air pollution in cities", "youth unemployment", "standardized testing",
	"hybrid cars", "volunteering", "procrastination", "seasonal affective disorder", "lab-grown meat",
	"carbon taxes", "overtourism", "self-driving cars", "music therapy", "vaccine hesitancy",
	"food waste", "rent control", "daylight saving time", "groundwater depletion", "cyberbullying",
}

var crowdQueryTemplates = []string{
	"what is %s and how can it be coped with?",
	"how does %s affect mental health?",
	"what are the main causes of %s?",
	"why is %s considered a problem?",
	"what are the pros and cons of %s?",
	"how has %s changed in recent years?",
	"what role does government play in addressing %s?",
	"how can individuals reduce the impact of %s?",
	"is %s a serious threat to society?",
	"what are the long-term effects of %s?",
	"how do experts explain %s?",
	"what can schools do about %s?",
	"does %s have economic consequences?",
	"what is the history of %s?",
	"how does %s impact the environment?",
	"who is most affected by %s?",
	"what are common misconceptions about %s?",
	"how is %s measured?",
}

var (
	txtActors = []string{
		"researchers", "clinicians", "mental health professionals", "public health officials",
		"economists", "policy makers", "educators", "social workers", "environmental scientists",
		"employers", "community leaders", "health experts", "several recent studies", "consumer advocates",
	}
	txtGroups = []string{
		"young adults", "older adults", "low-income households", "first responders", "healthcare workers",
		"students", "small business owners", "rural communities", "parents", "teenagers",
		"urban residents", "frontline workers", "people with chronic illness", "new employees",
	}
	txtEffects = []string{
		"higher stress levels", "reduced productivity", "poor sleep quality", "long-term health problems",
		"financial strain", "social isolation", "emotional exhaustion", "lower academic performance",
		"increased healthcare costs", "environmental damage", "a reduced quality of life", "burnout",
		"greater inequality", "lost working hours", "anxiety and low mood",
	}
	txtRemedies = []string{
		"regular supervision", "peer support groups", "clear regulations", "public awareness campaigns",
		"mindfulness practices", "targeted funding", "better training programs", "flexible schedules",
		"early screening", "community outreach", "evidence-based therapy", "stronger enforcement",
		"setting healthy boundaries", "regular physical activity", "transparent reporting",
	}
	txtFactors = []string{
		"age", "income", "access to support", "prior experience", "local policies", "workload",
		"cultural background", "geographic location", "education level", "job security",
	}
	txtSigns = []string{
		"irritability", "trouble concentrating", "withdrawal from friends", "changes in appetite",
		"persistent fatigue", "rising costs", "declining participation", "frequent headaches",
		"a sense of hopelessness", "missed deadlines",
	}
	txtDescs = []string{
		"a complex and widely discussed issue", "a growing concern in many countries",
		"a topic that has received increasing attention", "a phenomenon with social and economic dimensions",
		"a problem that often goes unrecognized", "an area where research is still evolving",
	}
	txtVerbs = []string{"suggest", "report", "emphasize", "note", "warn", "argue", "have found", "point out"}
	txtConns = []string{
		"In addition,", "Moreover,", "However,", "For example,", "As a result,", "At the same time,",
		"Overall,", "Notably,", "In practice,", "Furthermore,", "On the other hand,",
	}
	txtCities = []string{
		"Zürich", "São Paulo", "Montréal", "Köln", "Málaga", "Łódź", "Reykjavík", "Tromsø", "Kraków",
		"Düsseldorf", "Chicago", "Toronto", "Melbourne", "Dublin", "Austin", "Leeds", "Seattle",
	}
	txtQuoted = []string{
		"compassion fatigue", "secondary stress", "the new normal", "digital detox", "slow living",
		"quiet quitting", "eco-anxiety", "doomscrolling", "burnout culture", "hidden costs",
	}
	txtSites = []string{
		"HealthLine Today", "The Civic Review", "Example News", "Green Planet Journal", "Café Scientifique",
		"Société Info", "MindWell", "Policy Digest", "Everyday Science", "The Learning Hub", "Naïve Economics",
	}
	txtDomains = []string{
		"www.example.org", "example.com", "health.example.net", "news.example.org", "www.example.edu",
		"blog.example.com", "data.example.gov",
	}
	txtHeadings = []string{
		"Symptoms", "How to Cope", "Key Takeaways", "FAQ", "Causes", "Overview", "What the Research Says",
		"Prevention", "Background", "Why It Matters",
	}
	txtTitleSuffixes = []string{
		"What You Need to Know", "Causes, Effects and Solutions", "A Complete Guide", "Facts & Figures",
		"Frequently Asked Questions", "Myths vs. Facts", "Everything Explained", "Tips From Experts",
	}
	txtAccented = []string{
		"café", "naïve", "résumé", "façade", "déjà vu", "über", "piñata", "fiancée", "coöperation", "rôle",
	}
	txtSymbolPhrases = []string{
		"at around 21\u00a0°C", "give or take ±5%", "in roughly ½ of all cases", "— and sometimes more…",
		"at a cost of €50\u00a0million", "by a factor of 3×", "according to the NHS™ guidance", "(© 2023 Example Media)",
	}
	// astral (non-BMP) runes: encoded as UTF-16 surrogate pairs.
	txtEmoji = []string{"🙂", "👉", "🌍", "💡", "📌", "🚀"}
)

var answerTemplates = []string{
	"{S_} is often described as {D}.",
	"{A_} {V} that {S} can lead to {E} and {E2}.",
	"One of the most effective strategies is {R}, which helps to limit {E}.",
	"According to a {Y} survey, about {P}% of {G} reported {E}.",
	"{C} {R} and {R2} are commonly recommended by {A}.",
	"However, the evidence on {S} remains mixed, and {A} continue to debate its causes.",
	"Experts also stress that {S} affects {G} differently depending on {F}.",
	"Ultimately, addressing {S} requires {R} as well as {R2}.",
	"It is important to recognize early warning signs such as {SG} and {SG2}.",
	"{G_} are particularly vulnerable because of differences in {F} and {F2}.",
	"{C} {S} has been linked to {E}, especially among {G}.",
	"Studies from {Y} onward show that {R} reduces the risk of {E} by roughly {P}%.",
	"{A_} recommend combining {R} with {R2} to achieve lasting results.",
	"The impact of {S} on {G} is expected to grow over the next decade.",
	"Many {G} are unaware that {S} can contribute to {E}.",
	"{C} local initiatives that focus on {R} have shown promising results.",
	"In the long run, {S} may result in {E} if it is not addressed early.",
	"A key factor is {F}, which shapes how {G} experience {S}.",
	"Practical steps include {R}, {R2}, and seeking professional help when needed.",
	"Because {S} is {D}, there is no single solution that works for everyone.",
	"It’s worth noting that {R} is not a substitute for {R2}.",
	"{A_} {V} that {G} don’t always have access to {R}.",
}

var passageTemplates = []string{
	"It’s estimated that {P}% of {G} experience {E} at some point in their lives.",
	"Between {Y}–{Y2}, reports related to {S} rose by roughly {P}%.",
	"Some experts call this “{Q},” a term that became popular around {Y}.",
	"{A_} {V} that {S} isn’t always easy to recognize — especially among {G}.",
	"The study, conducted in {CITY}, followed {N} participants for {K} years.",
	"In {CITY}, local authorities spent {SYM}{N} on {R} last year.",
	"{S_} is {D}, and it’s linked to {E}.",
	"Don’t underestimate the role of {F}: it often determines whether {G} seek help.",
	"A {Y} report by {A} found that {R} cut {E} by nearly a third.",
	"“We see {E} far more often than a decade ago,” one of the authors said.",
	"Typical warning signs include {SG}, {SG2}, and {E}.",
	"{C} {R} is widely recommended, although results vary from person to person.",
	"The term is sometimes confused with \"{Q}\", which describes a related but different problem.",
	"Critics argue that the focus on {R} ignores structural issues such as {F}.",
	"{G_} who received {R} reported fewer problems with {E} after {K} months.",
	"Researchers in {CITY} describe {S} as {D}.",
	"Costs associated with {S} are estimated at {SYM}{N} million per year.",
	"If you’re struggling with {E}, talking to someone you trust can make a real difference.",
	"Unlike {Q}, {S} tends to develop gradually over {K} or more years.",
	"The guidance was updated in {Y} to include advice on {R} and {R2}.",
	"{C} many {G} say they’d welcome more information about {S}.",
	"The findings were consistent across age groups, income levels and regions.",
}

// textGen produces text for one topic from the topic's random stream.
type textGen struct {
	r       *rnd
	subject string
	// last value per slot family, so "{E} and {E2}" never repeats itself.
	last map[string]string
}

// fill expands {SLOT} placeholders. A trailing "_" capitalises the value.
func (g *textGen) fill(tmpl string) string {
	var b strings.Builder
	b.Grow(len(tmpl) + 64)
	for {
		i := strings.IndexByte(tmpl, '{')
		if i < 0 {
			b.WriteString(tmpl)
			break
		}
		j := strings.IndexByte(tmpl[i:], '}') + i
		b.WriteString(tmpl[:i])
		slot := tmpl[i+1 : j]
		tmpl = tmpl[j+1:]
		capital := strings.HasSuffix(slot, "_")
		slot = strings.TrimSuffix(slot, "_")
		v := g.slot(slot)
		if capital {
			v = upperFirst(v)
		}
		b.WriteString(v)
	}
	return upperFirst(b.String())
}

func (g *textGen) slot(name string) string {
	if name == "Y2" { // a later year than the preceding {Y}
		y, _ := strconv.Atoi(g.last["Y"])
		return strconv.Itoa(y + g.r.between(1, 8))
	}
	family := strings.TrimSuffix(name, "2")
	v := g.slotValue(family)
	if name != family {
		for v == g.last[family] {
			v = g.slotValue(family)
		}
	}
	if g.last == nil {
		g.last = make(map[string]string)
	}
	g.last[family] = v
	return v
}

func (g *textGen) slotValue(name string) string {
	r := g.r
	switch name {
	case "S":
		return g.subject
	case "A":
		return pick(r, txtActors)
	case "V":
		return pick(r, txtVerbs)
	case "G":
		return pick(r, txtGroups)
	case "E":
		return pick(r, txtEffects)
	case "R":
		return pick(r, txtRemedies)
	case "F":
		return pick(r, txtFactors)
	case "SG":
		return pick(r, txtSigns)
	case "D":
		return pick(r, txtDescs)
	case "C":
		return pick(r, txtConns)
	case "Y":
		return strconv.Itoa(r.between(1998, 2024))

	case "P":
		return strconv.Itoa(r.between(3, 78))
	case "N":
		return strconv.Itoa(r.between(12, 4800))
	case "K":
		return strconv.Itoa(r.between(2, 15))
	case "Q":
		return pick(r, txtQuoted)
	case "CITY":
		return pick(r, txtCities)
	case "SYM":
		return pick(r, []string{"$", "€", "£"})
	}
	panic("unknown slot " + name)
}

func upperFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 || unicode.IsUpper(r) {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}

func lowerFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 {
		return s
	}
	return string(unicode.ToLower(r)) + s[n:]
}

func titleCase(s string) string {
	words := strings.Fields(s)
	for i, w := range words {
		if i > 0 && (w == "of" || w == "in" || w == "the" || w == "for" || w == "and") {
			continue
		}
		words[i] = upperFirst(w)
	}
	return strings.Join(words, " ")
}

func slug(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-':
			return r
		case r >= 'A' && r <= 'Z':
			return r + ('a' - 'A')
		case r == ' ':
			return '-'
		}
		return -1
	}, s)
}

// answerSentence returns one statement sentence (ends in "." or "?").
func (g *textGen) answerSentence() string {
	s := g.fill(pick(g.r, answerTemplates))
	if g.r.chance(0.04) {
		s = strings.TrimSuffix(s, ".") + " (see https://" + pick(g.r, txtDomains) + "/" + slug(g.subject) + ")."
	}
	return s
}

// query returns the topic question.
func (g *textGen) query() string {
	return strings.Replace(pick(g.r, crowdQueryTemplates), "%s", g.subject, 1)
}

// passage returns an MS MARCO-like web segment of at least minLen bytes.
func (g *textGen) passage(title string, minLen int, forceNonASCII, forceURL, emoji bool) string {
	r := g.r
	var b strings.Builder
	b.Grow(minLen + 256)
	b.WriteString(title)
	b.WriteByte('\n')
	if r.chance(0.35) {
		b.WriteString(pick(r, txtHeadings))
		b.WriteByte('\n')
	}
	if forceNonASCII {
		b.WriteString("Updated " + strconv.Itoa(r.between(2015, 2024)) + " – ")
	}
	n := 0
	emojiAt := -1
	if emoji {
		emojiAt = r.intn(4)
	}
	for b.Len() < minLen {
		if n > 0 {
			switch {
			case r.chance(0.08):
				b.WriteString("\n")
			case r.chance(0.05):
				b.WriteString("\n" + pick(r, txtHeadings) + "\n")
			default:
				b.WriteByte(' ')
			}
		}
		s := g.fill(pick(r, passageTemplates))
		switch x := r.intn(100); {
		case x < 6:
			s = strings.TrimSuffix(s, ".") + ", as the " + pick(r, txtAccented) + " example shows."
		case x < 10:
			s = strings.TrimSuffix(s, ".") + " " + pick(r, txtSymbolPhrases) + "."
		case x < 13:
			s = "• " + s
		}
		if n == emojiAt {
			s += " " + pick(r, txtEmoji)
		}
		b.WriteString(s)
		n++
	}
	if forceURL || r.chance(0.12) {
		b.WriteString(" Read more: https://" + pick(r, txtDomains) + "/" + strconv.Itoa(r.between(2015, 2024)) + "/" + slug(g.subject))
	}
	return b.String()
}

// docTitle returns a web page title for the topic subject.
func (g *textGen) docTitle() string {
	sep := " | "
	if g.r.chance(0.6) {
		sep = " – "
	}
	return titleCase(g.subject) + ": " + pick(g.r, txtTitleSuffixes) + sep + pick(g.r, txtSites)
}
