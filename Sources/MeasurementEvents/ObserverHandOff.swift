internal import CMeasurementAtomics
import Foundation

/// Makes the hand-off from the thread that adds an observer to the threads that run it visible
/// to ThreadSanitizer.
///
/// What the adding thread wrote before adding an observer (an inbox's fields, a recorder's
/// arrays) is read by whichever thread posts next. The center's lock orders the two, but on
/// Linux the sanitizer cannot see that lock, and reports a race in a user's TSan job. So an
/// atomic is bumped with release ordering before the observer is added (``publish()``), and the
/// observer reads it with acquire ordering before anything else (``receive()``): an edge the
/// sanitizer sees, at the cost of one load per notification (a plain load on x86 and ARM64).
package enum ObserverHandOff {
    /// Called just before `addObserver`.
    @inline(__always)
    package static func publish() { me_observer_handoff_publish() }

    /// Called first thing in the observer.
    @inline(__always)
    package static func receive() { me_observer_handoff_receive() }
}

extension NotificationCenter {
    /// Adds an observer of `name` with `object: nil` and no queue (on Linux a queue makes the
    /// poster wait for it to drain), the hand-off to it made visible to ThreadSanitizer
    /// (``ObserverHandOff``). For observers off the posting path's hot loop: `block` is called
    /// through one more closure (the inbox writes its observers with the two calls in place).
    package func addObserverHandingOff(
        forName name: Notification.Name, using block: @escaping @Sendable (Notification) -> Void
    ) -> any NSObjectProtocol {
        ObserverHandOff.publish()
        return addObserver(forName: name, object: nil, queue: nil) { notification in
            ObserverHandOff.receive()
            block(notification)
        }
    }
}
