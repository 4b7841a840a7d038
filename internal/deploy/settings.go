package deploy

import (
	"fmt"
	"strings"
)

// settingRules are how one kind of SQL server's managed.settings are
// checked before anything starts (CheckPostgresSettings,
// CheckMariaDBSettings).
type settingRules struct {
	isName  func(string) bool
	notName string // what a refused name is not, with a hint: "a PostgreSQL setting name; use ..."
	// reserved are the settings Headroom sets itself, and why, under the
	// names key gives them.
	reserved map[string]string
	key      func(name string) string
	// forbid are the characters a value may not hold besides control
	// characters; notValue says so in the message ("" when none).
	forbid, notValue string
}

// check reports the first setting, in name order so that the same problem
// is reported every time, whose name is not one, that Headroom sets
// itself, or whose value is not one line the configuration file can hold.
func (rules settingRules) check(settings map[string]string) error {
	for _, k := range sortedKeys(settings) {
		if !rules.isName(k) {
			return fmt.Errorf("managed.settings: %q is not %s", truncateName(k), rules.notName)
		}
		field := "managed.settings." + k
		if why, ok := rules.reserved[rules.key(k)]; ok {
			return fmt.Errorf("%s: Headroom sets this itself (%s); remove it", field, why)
		}
		for _, r := range settings[k] {
			if r < 0x20 || r == 0x7f || strings.ContainsRune(rules.forbid, r) {
				return fmt.Errorf("%s: the value must be one line without control characters%s", field, rules.notValue)
			}
		}
	}
	return nil
}
