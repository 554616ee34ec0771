import ImpressionTracking
import XCTest

final class ReimpressionPolicyTests: XCTestCase {
    /// Two appearances of item 1, each long enough.
    private let twoAppearances: [Step] = [
        .appear(1, at: 0), .disappear(1, at: 2), .appear(1, at: 3), .disappear(1, at: 5),
    ]
    /// Item 1 counted while visible, a stay in background, then visible again for 2 s.
    private let backgroundAndBack: [Step] = [
        .appear(1, at: 0), .commit(at: 2), .background(at: 3), .active(at: 4), .commit(at: 6),
    ]
    /// Item 1 counted while visible, a content reload, then visible for 2 s more.
    private let reloadWhileVisible: [Step] = [.appear(1, at: 0), .commit(at: 2), .reload(at: 3), .commit(at: 5)]

    func testOncePerLifetimeCountsEachItemOnce() throws {
        try [
            Scenario(
                name: "lifetime, two appearances", policy: .oncePerLifetime, steps: twoAppearances,
                impressions: [.init(id: 1, start: 0, end: 2, duration: 2)]),
            Scenario(
                name: "lifetime, background and back", policy: .oncePerLifetime, steps: backgroundAndBack,
                impressions: [.init(id: 1, start: 0, end: nil, duration: 2)]),
            Scenario(
                name: "lifetime, reload", policy: .oncePerLifetime, steps: reloadWhileVisible,
                impressions: [.init(id: 1, start: 0, end: nil, duration: 2)]),
        ].forEach { try $0.run() }
    }

    func testOncePerAppearanceCountsEachAppearance() throws {
        try [
            Scenario(
                name: "appearance, two appearances", policy: .oncePerAppearance, steps: twoAppearances,
                impressions: [.init(id: 1, start: 0, end: 2, duration: 2), .init(id: 1, start: 3, end: 5, duration: 2)]),
            Scenario(
                name: "appearance, background and back is the same appearance", policy: .oncePerAppearance,
                steps: backgroundAndBack, impressions: [.init(id: 1, start: 0, end: nil, duration: 2)]),
            Scenario(
                name: "appearance, a dip and recovery within one appearance", policy: .oncePerAppearance,
                steps: [.appear(1, at: 0), .fraction(1, 0.1, at: 1.5), .fraction(1, 1, at: 1.6), .disappear(1, at: 5)],
                impressions: [.init(id: 1, start: 0, end: 1.5, duration: 1.5)]),
        ].forEach { try $0.run() }
    }

    func testAfterReturnFromBackgroundCountsAgainOnReturn() throws {
        try [
            Scenario(
                name: "background and back", policy: .afterReturnFromBackground, steps: backgroundAndBack,
                impressions: [
                    .init(id: 1, start: 0, end: nil, duration: 2), .init(id: 1, start: 4, end: nil, duration: 2),
                ]),
            Scenario(
                name: "two appearances without background", policy: .afterReturnFromBackground, steps: twoAppearances,
                impressions: [.init(id: 1, start: 0, end: 2, duration: 2)]),
        ].forEach { try $0.run() }
    }

    func testAfterContentReloadCountsAgainFromTheReload() throws {
        try [
            Scenario(
                name: "reload", policy: .afterContentReload, steps: reloadWhileVisible,
                impressions: [
                    .init(id: 1, start: 0, end: nil, duration: 2), .init(id: 1, start: 3, end: nil, duration: 2),
                ]),
            Scenario(
                name: "reload ends a qualified visit that was not committed yet", policy: .afterContentReload,
                steps: [.appear(1, at: 0), .reload(at: 1.5), .disappear(1, at: 2)],
                impressions: [.init(id: 1, start: 0, end: 1.5, duration: 1.5)]),
            Scenario(
                name: "background and back without reload", policy: .afterContentReload, steps: backgroundAndBack,
                impressions: [.init(id: 1, start: 0, end: nil, duration: 2)]),
        ].forEach { try $0.run() }
    }

    func testRepeatsHeldBackByThePolicyAreCounted() throws {
        let harness = try EngineUnderTest { $0.reimpressionPolicy = .oncePerLifetime }
        for step in twoAppearances { step.apply(to: harness.engine) }
        XCTAssertEqual(harness.engine.diagnostics.repeatsSuppressed, 1)
        XCTAssertEqual(harness.engine.diagnostics.discardedTooShort, 0)
    }

    func testDescriptionNamesTheOptions() {
        XCTAssertEqual(ReimpressionPolicy.oncePerLifetime.description, "oncePerLifetime")
        XCTAssertEqual(
            ([.afterDisappearance, .afterContentReload] as ReimpressionPolicy).description,
            "[afterDisappearance, afterContentReload]")
    }
}
