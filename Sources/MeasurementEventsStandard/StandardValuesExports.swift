// Orders, screen views, decimal amounts and their checks live in MeasurementEventsStandardValues,
// which the vendors' encoders link without the rest of this module; an app that imports this
// module sees them as before.
@_exported import MeasurementEventsStandardValues
