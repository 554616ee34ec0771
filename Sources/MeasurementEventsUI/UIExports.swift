// The UI layer's whole logic lives in MeasurementEventsStandard (ScreenAppearances), tested on
// every platform; this module adds only the SwiftUI and UIKit entry points.
@_exported import MeasurementEventsStandard
