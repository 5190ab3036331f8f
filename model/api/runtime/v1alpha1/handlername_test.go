package v1alpha1

import "testing"

func TestSplitHandlerName(t *testing.T) {
	for _, tc := range []struct {
		name, handler, config string
		ok                    bool
	}{
		{"images.ext-a", "images", "ext-a", true},
		{"plan.ext.with.dots", "plan", "ext.with.dots", true},
		{"images", "images", "", false},
		{".ext", "", "ext", false},
		{"images.", "images", "", false},
		{"", "", "", false},
	} {
		h, c, ok := SplitHandlerName(tc.name)
		if h != tc.handler || c != tc.config || ok != tc.ok {
			t.Errorf("SplitHandlerName(%q) = %q, %q, %t; want %q, %q, %t", tc.name, h, c, ok, tc.handler, tc.config, tc.ok)
		}
	}
}
