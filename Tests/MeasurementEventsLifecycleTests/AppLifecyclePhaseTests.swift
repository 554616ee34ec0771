import XCTest

@testable import MeasurementEventsLifecycle

/// The lifecycle state machine, signal by signal.
final class AppLifecyclePhaseTests: XCTestCase {
    func testFirstActivationAfterLaunchOpensNotFromBackground() {
        var phase = AppLifecyclePhase()
        XCTAssertEqual(phase.handle(.didBecomeActive), [.postOpened(fromBackground: false)])
        XCTAssertEqual(phase.phase, .foreground)
    }

    func testActivationWhileInTheForegroundDoesNothing() {
        var phase = AppLifecyclePhase()
        _ = phase.handle(.didBecomeActive)
        XCTAssertEqual(phase.handle(.didBecomeActive), [])
        XCTAssertEqual(phase.handle(.willEnterForeground), [])
    }

    func testEnteringTheBackgroundPostsBeforeTellingTheAggregator() {
        var phase = AppLifecyclePhase()
        _ = phase.handle(.didBecomeActive)
        XCTAssertEqual(phase.handle(.didEnterBackground), [.postBackgrounded, .enterBackground])
        XCTAssertEqual(phase.handle(.didEnterBackground), [])
    }

    func testReturningTellsTheAggregatorBeforePostingOpenedOnce() {
        var phase = AppLifecyclePhase()
        _ = phase.handle(.didBecomeActive)
        _ = phase.handle(.didEnterBackground)
        XCTAssertEqual(phase.handle(.willEnterForeground), [.enterForeground, .postOpened(fromBackground: true)])
        XCTAssertEqual(phase.handle(.didBecomeActive), [])
    }

    func testActivationFromTheBackgroundWithoutWillEnterForegroundStillReturns() {
        var phase = AppLifecyclePhase()
        _ = phase.handle(.didBecomeActive)
        _ = phase.handle(.didEnterBackground)
        XCTAssertEqual(phase.handle(.didBecomeActive), [.enterForeground, .postOpened(fromBackground: true)])
    }

    func testBackgroundLaunchIsNotAnOpenAndItsFirstForegroundIsFromBackground() {
        var phase = AppLifecyclePhase()
        XCTAssertEqual(phase.handle(.didEnterBackground), [.enterBackground])
        XCTAssertEqual(phase.handle(.willEnterForeground), [.enterForeground, .postOpened(fromBackground: true)])
    }

    func testTerminationFlushesInAnyPhase() {
        var phase = AppLifecyclePhase()
        XCTAssertEqual(phase.handle(.willTerminate), [.flush])
        _ = phase.handle(.didBecomeActive)
        XCTAssertEqual(phase.handle(.willTerminate), [.flush])
        XCTAssertEqual(phase.phase, .foreground)
    }
}
