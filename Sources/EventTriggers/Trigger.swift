/// What happened to an object, as the UI layer reports it to a ``TriggerDetector``.
///
/// Each case has one entry point on the detector: `reportDidAppear(_:)` for ``didAppear``,
/// and so on.
///
/// ```swift
/// detector.attach(TriggeredEvent(.didEndTouch) { firing in print("tapped at", firing.timestamp) }, to: button)
/// ```
public enum Trigger: String, CaseIterable, Hashable, Sendable, CustomStringConvertible {
    /// Never fires: an event kept attached but switched off. Reporting `.none` does nothing.
    case none
    /// The object was displayed (a screen's `viewDidAppear`, a cell's `willDisplay`).
    case didAppear
    /// The object stopped being displayed.
    case didDisappear
    /// A touch on the object ended (a tap).
    case didEndTouch
    /// The user began scrolling the object.
    case didBeginScroll
    /// The object became first responder (a text field got the keyboard).
    case didBecomeFirstResponder
    /// The object resigned first responder.
    case didResignFirstResponder
    /// The object (a control) sent its target-action message.
    case targetAction

    /// The case name, as trace lines show it: `didAppear`.
    public var description: String { rawValue }
}
