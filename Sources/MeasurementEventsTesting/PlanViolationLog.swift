import Foundation
import MeasurementEvents
import MeasurementEventsAggregator

/// Collects the tracking-plan violations an aggregator reports, so that a test fails on any.
///
/// ```swift
/// let violations = PlanViolationLog()
/// var configuration = EventAggregator.Configuration()
/// configuration.catalogs = [DemoFeedEvents.catalog]
/// configuration.problemHandler = violations.problemHandler()
/// // … drive the feature, then wait for delivery …
/// try violations.expectNoViolations()   // XCTest or Swift Testing
/// ```
public final class PlanViolationLog: Sendable {
    private let recorded = LockedValue<[PlanViolation]>([])

    /// An empty log.
    public init() {}

    /// A problem handler for `EventAggregator.Configuration.problemHandler` that records plan
    /// violations and hands every problem to `next` too.
    ///
    /// - Parameter next: the handler that also receives every problem, if any.
    /// - Returns: the handler to set.
    public func problemHandler(
        forwardingTo next: (@Sendable (EventAggregator.Problem) -> Void)? = nil
    ) -> @Sendable (EventAggregator.Problem) -> Void {
        { [self] problem in
            if case .planViolation(let violation) = problem { record(violation) }
            next?(problem)
        }
    }

    /// Records a violation.
    ///
    /// - Parameter violation: a violation reported by an aggregator.
    public func record(_ violation: PlanViolation) {
        recorded.withLock { $0.append(violation) }
    }

    /// Every violation recorded, oldest first.
    public var violations: [PlanViolation] {
        recorded.withLock { $0 }
    }

    /// Throws when any violation was recorded; the error lists each with its file and line.
    /// In Swift Testing, `try violations.expectNoViolations()` fails the test with that list;
    /// in XCTest a throwing test method does the same (or use `assertNoViolations()`).
    ///
    /// - Throws: ``PlanViolationsError`` listing every violation.
    public func expectNoViolations() throws(PlanViolationsError) {
        let violations = self.violations
        if !violations.isEmpty { throw PlanViolationsError(violations: violations) }
    }
}

/// The violations a ``PlanViolationLog`` recorded when none were expected.
public struct PlanViolationsError: Error, Sendable, CustomStringConvertible {
    /// The violations, oldest first.
    public var violations: [PlanViolation]

    /// `2 tracking-plan violations:` and one line per violation.
    public var description: String {
        (["\(violations.count) tracking-plan violation\(violations.count == 1 ? "" : "s"):"]
            + violations.map { "  " + $0.description }).joined(separator: "\n")
    }
}

// Guarded like XCTestSupport.swift, whose comment says why `canImport(XCTest)` is enough.
#if canImport(XCTest)
    import XCTest

    extension PlanViolationLog {
        /// Fails the current test once per recorded violation, naming the line that posted it.
        ///
        /// - Parameters:
        ///   - file: the file the failures are reported in; the caller's by default.
        ///   - line: the line the failures are reported at; the caller's by default.
        public func assertNoViolations(file: StaticString = #filePath, line: UInt = #line) {
            for violation in violations {
                XCTFail("tracking-plan violation: \(violation)", file: file, line: line)
            }
        }
    }
#endif
