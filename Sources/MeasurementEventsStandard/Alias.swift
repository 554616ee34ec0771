import Foundation
import MeasurementEvents
import MeasurementEventsAggregator

/// Tells vendors that two user ids are the same user (Segment's `alias`).
///
/// ```swift
/// Alias.post(previousID: "anon-1234", userID: "user-42")
/// ```
public enum Alias {
    /// Posts `user/aliased`.
    ///
    /// - Parameters:
    ///   - previousID: the id the user was known by.
    ///   - userID: the id the user is known by from now on.
    ///   - center: where to post; `.default` unless a test isolates it.
    public static func post(previousID: String, userID: String, to center: NotificationCenter = .default) {
        MeasurementEventsStandardEvents.UserAliased(previousID: previousID, userID: userID).post(to: center)
    }
}
