package rollout

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Window is a weekly maintenance window: on the listed days, from Start for Length, in a time
// zone. The days are those on which the window opens; one that runs past midnight ends the next
// day.
type Window struct {
	Days   [7]bool // by time.Weekday
	Start  time.Duration
	Length time.Duration
	Loc    *time.Location
	Text   string
}

var weekdays = map[string]time.Weekday{"sun": time.Sunday, "mon": time.Monday, "tue": time.Tuesday, "wed": time.Wednesday,
	"thu": time.Thursday, "fri": time.Friday, "sat": time.Saturday}

// ParseWindow reads "<days> <HH:MM>-<HH:MM> <time zone>": days as "*", "Mon-Fri" or "Sat,Sun"
// (ranges and lists mix), the zone an IANA name such as "Europe/Berlin" or "UTC". An end before
// the start runs past midnight; an end equal to the start is a whole day.
func ParseWindow(s string) (Window, error) {
	w := Window{Text: s}
	f := strings.Fields(s)
	if len(f) != 3 {
		return w, fmt.Errorf("%q: want \"<days> <HH:MM>-<HH:MM> <time zone>\", for example \"Sat,Sun 02:00-06:00 Europe/Berlin\"", s)
	}
	if err := parseDays(f[0], &w.Days); err != nil {
		return w, fmt.Errorf("%q: %w", s, err)
	}
	from, to, ok := strings.Cut(f[1], "-")
	if !ok {
		return w, fmt.Errorf("%q: want a time range \"HH:MM-HH:MM\", got %q", s, f[1])
	}
	start, err := clock(from)
	if err != nil {
		return w, fmt.Errorf("%q: %w", s, err)
	}
	end, err := clock(to)
	if err != nil {
		return w, fmt.Errorf("%q: %w", s, err)
	}
	w.Start, w.Length = start, end-start
	if w.Length <= 0 {
		w.Length += 24 * time.Hour
	}
	if w.Loc, err = time.LoadLocation(f[2]); err != nil || f[2] == "Local" {
		return w, fmt.Errorf("%q: unknown time zone %q (want an IANA name such as Europe/Berlin, or UTC)", s, f[2])
	}
	return w, nil
}

func parseDays(s string, days *[7]bool) error {
	if s == "*" {
		for i := range days {
			days[i] = true
		}
		return nil
	}
	for _, part := range strings.Split(s, ",") {
		from, to, isRange := strings.Cut(part, "-")
		a, ok := weekdays[strings.ToLower(from)]
		if !ok {
			return fmt.Errorf("unknown day %q (want Mon, Tue, Wed, Thu, Fri, Sat, Sun or *)", from)
		}
		b := a
		if isRange {
			if b, ok = weekdays[strings.ToLower(to)]; !ok {
				return fmt.Errorf("unknown day %q (want Mon, Tue, Wed, Thu, Fri, Sat, Sun or *)", to)
			}
		}
		for d := a; ; d = (d + 1) % 7 {
			days[d] = true
			if d == b {
				break
			}
		}
	}
	return nil
}

func clock(s string) (time.Duration, error) {
	h, m, ok := strings.Cut(s, ":")
	hh, err1 := strconv.Atoi(h)
	mm, err2 := strconv.Atoi(m)
	if !ok || err1 != nil || err2 != nil || len(m) != 2 || hh < 0 || hh > 24 || mm < 0 || mm > 59 || (hh == 24 && mm != 0) {
		return 0, fmt.Errorf("bad time of day %q (want HH:MM, 00:00 to 24:00)", s)
	}
	return time.Duration(hh)*time.Hour + time.Duration(mm)*time.Minute, nil
}

// opening is the start of the window's occurrence on t's day (in the window's zone).
func (w Window) opening(t time.Time) time.Time {
	y, m, d := t.In(w.Loc).Date()
	// Wall-clock hours and minutes, so that a window keeps its local time across DST changes.
	return time.Date(y, m, d, int(w.Start/time.Hour), int(w.Start%time.Hour/time.Minute), 0, 0, w.Loc)
}

// Windows are a Cluster's maintenance windows; none means any time.
type Windows []Window

// ParseWindows parses each window.
func ParseWindows(texts []string) (Windows, error) {
	ws := make(Windows, 0, len(texts))
	for _, s := range texts {
		w, err := ParseWindow(s)
		if err != nil {
			return nil, err
		}
		ws = append(ws, w)
	}
	return ws, nil
}

// SplitAnnotation reads the per-Cluster override (topoflow.dev/maintenance-windows): windows
// separated by ";".
func SplitAnnotation(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ";") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// Span is one occurrence of a window, in absolute time: open from From until To.
type Span struct {
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
}

// Openings are when a list of windows is open, as absolute spans from a day before an activity's
// clock to OpeningHorizon after it. The rollout's workflow decides with them and never reads time
// zone rules itself: those are files of the worker's host (or the binary's copy), and two workers
// with different versions would decide differently on replay. Err says why the list cannot be
// read.
type Openings struct {
	Spans []Span `json:"spans,omitempty"`
	Err   string `json:"err,omitempty"`
}

// OpeningHorizon is how far ahead Openings reach: every weekly window opens within it.
const OpeningHorizon = 8 * 24 * time.Hour

// WindowsKey names a list of windows (the spec's, or a Cluster's own) in WindowOpenings.
func WindowsKey(texts []string) string { return strings.Join(texts, "; ") }

// WindowOpenings reads each list of windows and lays out its openings around now (the activity's
// clock), by WindowsKey.
func WindowOpenings(lists [][]string, now time.Time) map[string]Openings {
	out := map[string]Openings{}
	for _, texts := range lists {
		ws, err := ParseWindows(texts)
		if err != nil {
			out[WindowsKey(texts)] = Openings{Err: err.Error()}
			continue
		}
		out[WindowsKey(texts)] = Openings{Spans: ws.spans(now)}
	}
	return out
}

// spans are the windows' occurrences opening from the day before now to OpeningHorizon after it,
// by opening time.
func (ws Windows) spans(now time.Time) []Span {
	var out []Span
	days := int(OpeningHorizon / (24 * time.Hour))
	for _, w := range ws {
		for d := -1; d <= days; d++ {
			// An occurrence that opened yesterday may still run (past midnight, or a whole day).
			if o := w.opening(now.In(w.Loc).AddDate(0, 0, d)); w.Days[o.Weekday()] {
				out = append(out, Span{From: o.UTC(), To: o.Add(w.Length).UTC()})
			}
		}
	}
	slices.SortFunc(out, func(a, b Span) int { return a.From.Compare(b.From) })
	return out
}

// NextOpen is the earliest time at or after t that a window is open: t itself when one is open
// then; zero when none opens within the spans.
func (o Openings) NextOpen(t time.Time) time.Time {
	var best time.Time
	for _, sp := range o.Spans {
		switch {
		case !t.Before(sp.From) && t.Before(sp.To):
			return t
		case sp.From.After(t) && (best.IsZero() || sp.From.Before(best)):
			best = sp.From
		}
	}
	return best
}
