internal import CMeasurementAtomics
import Foundation

extension NotificationCenter {
    /// Adds an observer of `name` with `object: nil` and no queue (on Linux a queue makes the
    /// poster wait for it to drain), and makes the hand-off to it visible to ThreadSanitizer.
    ///
    /// What the calling thread wrote before this call (an inbox's fields, a recorder's arrays)
    /// is read by whichever thread posts next. The center's lock orders the two, but on Linux
    /// the sanitizer cannot see that lock, and reports a race in a user's TSan job. So the call
    /// bumps an atomic with release ordering before adding the observer, and the observer reads
    /// it with acquire ordering before running `block`: an edge the sanitizer sees, at the cost
    /// of one load per notification (a plain load on x86 and ARM64).
    package func addObserverHandingOff(
        forName name: Notification.Name, using block: @escaping @Sendable (Notification) -> Void
    ) -> any NSObjectProtocol {
        me_observer_handoff_publish()
        return addObserver(forName: name, object: nil, queue: nil) { notification in
            me_observer_handoff_receive()
            block(notification)
        }
    }
}
