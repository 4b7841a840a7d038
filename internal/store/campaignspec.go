package store

import "database/sql"

// SetSpecYAML replaces the campaign's stored spec. headroom assess --verify
// uses it when it adds a treatment to a campaign, so that the stored spec
// keeps describing every treatment the store holds runs of.
func (s *Store) SetSpecYAML(yaml string) error {
	const doing = "writing the campaign's spec"
	return s.write(doing, nil, func(tx *sql.Tx) error {
		if _, err := tx.Exec(`UPDATE campaign SET spec_yaml = ? WHERE id = 1`, yaml); err != nil {
			return s.fail(doing, err)
		}
		return nil
	})
}
