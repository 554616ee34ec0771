// swift-tools-version: 6.0
import PackageDescription

// The size budget's apps (Benchmarks/Scripts/size_budget.sh): the same app posting one event
// through an aggregator to an HTTPTracker with the Segment encoder, alone and with each further
// capability (a define per target says which: `canImport` sees every module of the build
// folder), and a hello world whose size is subtracted. Built in release with the toolchain's
// default dead stripping.

/// What the one-event app links: the bus, the aggregator and the HTTP tracker.
let oneEvent: [Target.Dependency] = ["", "Aggregator", "HTTP"].map {
    .product(name: "MeasurementEvents\($0)", package: "MeasurementEvents")
}

let package = Package(
    name: "SizeBudget",
    platforms: [.macOS(.v13)],
    dependencies: [.package(name: "MeasurementEvents", path: "../..")],
    targets: [
        .executableTarget(name: "hello", path: "Sources/hello"),
        // Not measured for size: the one-event app's setup left idle, for its CPU time a minute.
        .executableTarget(name: "idle", dependencies: oneEvent, path: "Sources/idle"),
        .executableTarget(name: "one-event", dependencies: oneEvent, path: "Sources/one-event"),
        .executableTarget(
            name: "with-plan",
            dependencies: oneEvent + [.product(name: "MeasurementEventsPlan", package: "MeasurementEvents")],
            path: "Sources/with-plan",
            swiftSettings: [.define("USES_PLAN")]),
        .executableTarget(
            name: "with-standard-calls",
            dependencies: oneEvent + [.product(name: "MeasurementEventsStandard", package: "MeasurementEvents")],
            path: "Sources/with-standard-calls",
            swiftSettings: [.define("USES_STANDARD_CALLS")]),
        .executableTarget(
            name: "with-lifecycle",
            dependencies: oneEvent + [.product(name: "MeasurementEventsLifecycle", package: "MeasurementEvents")],
            path: "Sources/with-lifecycle",
            swiftSettings: [.define("USES_LIFECYCLE")]),
        .executableTarget(
            name: "all-capabilities",
            dependencies: oneEvent + ["Plan", "Standard", "Lifecycle"].map {
                .product(name: "MeasurementEvents\($0)", package: "MeasurementEvents")
            },
            path: "Sources/all-capabilities",
            swiftSettings: [.define("USES_PLAN"), .define("USES_STANDARD_CALLS"), .define("USES_LIFECYCLE")]),
    ],
    swiftLanguageModes: [.v6]
)
