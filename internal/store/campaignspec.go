package store

// SetSpecYAML replaces the campaign's stored spec. headroom assess --verify
// uses it when it adds a treatment to a campaign, so that the stored spec
// keeps describing every treatment the store holds runs of.
func (s *Store) SetSpecYAML(yaml string) error {
	if _, err := s.db.Exec(`UPDATE campaign SET spec_yaml = ? WHERE id = 1`, yaml); err != nil {
		return s.fail("writing the campaign's spec", err)
	}
	return nil
}
