// Guarded by `canImport(XCTest)` alone, with no platform or version condition. XCTest comes with
// the toolchain, not with the system: on Apple platforms it is the framework in each platform's
// Developer directory of Xcode, for iOS, iPadOS, Mac Catalyst, macOS, tvOS, visionOS and watchOS
// (watchOS 7.4 and later, since Xcode 12.5), all below this package's deployment targets, so no
// availability annotation is needed; elsewhere it is swift-corelibs-xctest. Where none is found (a
// Mac with the command-line tools only, a toolchain without it) these helpers are left out rather
// than broken. What no compile-time condition can tell is a test bundle from an app: XCTest is not
// installed on devices, so an app or an app extension that links this module fails at launch.
// Link it into test targets only (the module's overview says so).
#if canImport(XCTest)
    import Foundation
    import MeasurementEvents
    import XCTest

    extension XCTestCase {
        /// An expectation fulfilled when `name` (with `args`, when given) is posted on `center`:
        /// `expectation(forNotification:)` on the uniform name with a matching handler.
        ///
        /// ```swift
        /// let tapped = expectation(forMeasurementEvent: "feed/item_tapped", args: ["position": 3])
        /// feed.didTapItem(id: "42", at: 3)
        /// wait(for: [tapped], timeout: 1)
        /// ```
        ///
        /// - Parameters:
        ///   - name: the event name to wait for.
        ///   - args: args that must be present with these values; others are ignored.
        ///   - type: the event type it must have; `nil` accepts any.
        ///   - center: where the event is posted.
        /// - Returns: an expectation fulfilled by the first matching event.
        public func expectation(
            forMeasurementEvent name: EventName, args: [String: any EventValueConvertible] = [:],
            type: EventType? = nil,
            center: NotificationCenter = .default
        ) -> XCTestExpectation {
            expectation(
                forNotification: .measurementEvent, object: nil, notificationCenter: center,
                handler: MeasurementEvent.matcher(name, args: args, type: type))
        }
    }

    extension EventRecorder {
        /// Fails the current test, listing what was posted, unless `name` (with `args`) is
        /// posted within `timeout` seconds. Returns the event when it was.
        ///
        /// - Parameters:
        ///   - name: the event name to wait for.
        ///   - args: args that must be present with these values; others are ignored.
        ///   - type: the event type it must have; `nil` accepts any.
        ///   - timeout: how long to wait, in seconds.
        ///   - file: the file the failure is reported in; the caller's by default.
        ///   - line: the line the failure is reported at; the caller's by default.
        /// - Returns: the event, or `nil` after failing the test.
        @discardableResult
        public func assertPosted(
            _ name: EventName, args: [String: any EventValueConvertible] = [:], type: EventType? = nil,
            timeout: TimeInterval = 1,
            file: StaticString = #filePath, line: UInt = #line
        ) -> MeasurementEvent? {
            do {
                return try waitForEvent(name, args: args, type: type, timeout: timeout)
            } catch {
                XCTFail("\(error)", file: file, line: line)
                return nil
            }
        }

        /// Fails the current test when `name` (with `args`) was recorded.
        ///
        /// - Parameters:
        ///   - name: the event name that must not have been posted.
        ///   - args: args that must be present with these values for an event to count.
        ///   - file: the file the failure is reported in; the caller's by default.
        ///   - line: the line the failure is reported at; the caller's by default.
        public func assertNotPosted(
            _ name: EventName, args: [String: any EventValueConvertible] = [:], file: StaticString = #filePath,
            line: UInt = #line
        ) {
            do { try expectNoEvent(name, args: args) } catch { XCTFail("\(error)", file: file, line: line) }
        }
    }
#endif
