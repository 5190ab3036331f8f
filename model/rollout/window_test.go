package rollout

import (
	"testing"
	"time"
)

func TestWindowOpenAndNext(t *testing.T) {
	berlin, _ := time.LoadLocation("Europe/Berlin")
	at := func(s string, loc *time.Location) time.Time {
		v, err := time.ParseInLocation("2006-01-02 15:04", s, loc)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	tests := []struct {
		window   string
		now      time.Time
		open     bool
		nextOpen time.Time
	}{
		// 2026-11-28 is a Saturday.
		{"Sat,Sun 02:00-06:00 Europe/Berlin", at("2026-11-28 03:00", berlin), true, at("2026-11-28 03:00", berlin)},
		{"Sat,Sun 02:00-06:00 Europe/Berlin", at("2026-11-28 06:00", berlin), false, at("2026-11-29 02:00", berlin)},
		{"Sat,Sun 02:00-06:00 Europe/Berlin", at("2026-11-25 12:00", berlin), false, at("2026-11-28 02:00", berlin)},
		// Past midnight: opened Friday 22:00, still open Saturday 03:00; the days are opening days.
		{"Mon-Fri 22:00-04:00 UTC", at("2026-11-28 03:00", time.UTC), true, at("2026-11-28 03:00", time.UTC)},
		{"Mon-Fri 22:00-04:00 UTC", at("2026-11-28 05:00", time.UTC), false, at("2026-11-30 22:00", time.UTC)},
		// A range across the week's end, and a whole day.
		{"Fri-Mon 00:00-00:00 UTC", at("2026-11-30 23:59", time.UTC), true, at("2026-11-30 23:59", time.UTC)},
		{"Fri-Mon 00:00-00:00 UTC", at("2026-12-01 00:00", time.UTC), false, at("2026-12-04 00:00", time.UTC)},
		// The zone decides: 02:00 in Berlin is 01:00 UTC in winter.
		{"* 02:00-03:00 Europe/Berlin", at("2026-11-25 01:30", time.UTC), true, at("2026-11-25 01:30", time.UTC)},
	}
	for _, tt := range tests {
		// Laid out by an activity a few hours earlier, read by the workflow at now.
		op := WindowOpenings([][]string{{tt.window}}, tt.now.Add(-5*time.Hour))[tt.window]
		if op.Err != "" {
			t.Fatalf("%s: %s", tt.window, op.Err)
		}
		got := op.NextOpen(tt.now)
		if open := got.Equal(tt.now); open != tt.open {
			t.Errorf("%s at %s: open = %v, want %v", tt.window, tt.now, open, tt.open)
		}
		if !got.Equal(tt.nextOpen) {
			t.Errorf("%s at %s: next = %s, want %s", tt.window, tt.now, got, tt.nextOpen)
		}
	}
}

func TestWindowOverDST(t *testing.T) {
	// 2026-03-29: Berlin moves from UTC+1 to UTC+2 at 02:00; a 03:00 window stays at 03:00 local.
	now := time.Date(2026, 3, 28, 12, 0, 0, 0, time.UTC)
	got := WindowOpenings([][]string{{"Sun 03:00-04:00 Europe/Berlin"}}, now)["Sun 03:00-04:00 Europe/Berlin"].NextOpen(now)
	if want := time.Date(2026, 3, 29, 1, 0, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("next = %s, want %s (03:00 CEST)", got.UTC(), want)
	}
}

func TestParseWindowRefuses(t *testing.T) {
	for _, s := range []string{
		"", "Sat 02:00-06:00", "Sat 02:00 Europe/Berlin", "Sunday 02:00-06:00 UTC", "Sat 2:0-06:00 UTC",
		"Sat 25:00-06:00 UTC", "Sat 02:00-06:00 Mars/Olympus", "Sat 02:00-06:00 Local", "Sat-Xyz 02:00-06:00 UTC",
	} {
		if _, err := ParseWindow(s); err == nil {
			t.Errorf("%q: accepted", s)
		}
	}
}

func TestNextOpenOfSeveral(t *testing.T) {
	list := []string{"Sat 02:00-06:00 UTC", "Wed 20:00-21:00 UTC"}
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC) // Wednesday
	op := WindowOpenings([][]string{list}, now)[WindowsKey(list)]
	if got, want := op.NextOpen(now), time.Date(2026, 11, 25, 20, 0, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("next = %s, want %s", got, want)
	}
	// The spans reach past the horizon's last day: a week on, the Wednesday window still opens.
	if got, want := op.NextOpen(now.Add(7*24*time.Hour)), time.Date(2026, 12, 2, 20, 0, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("a week on: next = %s, want %s", got, want)
	}
	bad := WindowOpenings([][]string{{"Sat 02:00-06:00 Mars/Olympus"}}, now)["Sat 02:00-06:00 Mars/Olympus"]
	if bad.Err == "" || len(bad.Spans) > 0 {
		t.Errorf("an unknown zone: %+v, want an error and no spans", bad)
	}
	if got := SplitAnnotation(" Sat 02:00-06:00 UTC ; Wed 20:00-21:00 UTC;"); len(got) != 2 || got[1] != "Wed 20:00-21:00 UTC" {
		t.Errorf("SplitAnnotation = %q", got)
	}
}
