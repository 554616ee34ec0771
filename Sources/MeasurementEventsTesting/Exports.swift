@_exported import MeasurementEvents
