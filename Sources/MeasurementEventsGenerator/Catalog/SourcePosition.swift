import MeasurementEventsJSON

/// A line and column in a catalog, both counted from 1; the JSON parser's type, named here so
/// that the generator's diagnostics read on their own.
package typealias SourcePosition = MeasurementEventsJSON.SourcePosition
