package results

// LegacyTreatments exposes the schema-1 reader to the external tests.
var LegacyTreatments = legacyTreatments
