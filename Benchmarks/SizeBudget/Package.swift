// swift-tools-version: 6.0
import PackageDescription

// The size budget's apps (Benchmarks/Scripts/size_budget.sh): the same app posting one event
// through an aggregator to an HTTPTracker with the Segment encoder, alone and with each further
// capability (a define per target says which: `canImport` sees every module of the build
// folder), and a hello world whose size is subtracted. Built in release with the toolchain's
// default dead stripping.
let package = Package(
    name: "SizeBudget",
    platforms: [.macOS(.v13)],
    dependencies: [.package(name: "MeasurementEvents", path: "../..")],
    targets: [
        .executableTarget(name: "hello", path: "Sources/hello"),
        // Not measured for size: the one-event app's setup left idle, for its CPU time a minute.
        .executableTarget(
            name: "idle",
            dependencies: [
                .product(name: "MeasurementEvents", package: "MeasurementEvents"),
                .product(name: "MeasurementEventsAggregator", package: "MeasurementEvents"),
                .product(name: "MeasurementEventsHTTP", package: "MeasurementEvents"),
            ],
            path: "Sources/idle"),
        .executableTarget(
            name: "one-event",
            dependencies: [
                .product(name: "MeasurementEvents", package: "MeasurementEvents"),
                .product(name: "MeasurementEventsAggregator", package: "MeasurementEvents"),
                .product(name: "MeasurementEventsHTTP", package: "MeasurementEvents"),
            ],
            path: "Sources/one-event"),
        .executableTarget(
            name: "with-plan",
            dependencies: [
                .product(name: "MeasurementEvents", package: "MeasurementEvents"),
                .product(name: "MeasurementEventsAggregator", package: "MeasurementEvents"),
                .product(name: "MeasurementEventsHTTP", package: "MeasurementEvents"),
                .product(name: "MeasurementEventsPlan", package: "MeasurementEvents"),
            ],
            path: "Sources/with-plan",
            swiftSettings: [.define("USES_PLAN")]),
        .executableTarget(
            name: "with-standard-calls",
            dependencies: [
                .product(name: "MeasurementEvents", package: "MeasurementEvents"),
                .product(name: "MeasurementEventsAggregator", package: "MeasurementEvents"),
                .product(name: "MeasurementEventsHTTP", package: "MeasurementEvents"),
                .product(name: "MeasurementEventsStandard", package: "MeasurementEvents"),
            ],
            path: "Sources/with-standard-calls",
            swiftSettings: [.define("USES_STANDARD_CALLS")]),
        .executableTarget(
            name: "with-lifecycle",
            dependencies: [
                .product(name: "MeasurementEvents", package: "MeasurementEvents"),
                .product(name: "MeasurementEventsAggregator", package: "MeasurementEvents"),
                .product(name: "MeasurementEventsHTTP", package: "MeasurementEvents"),
                .product(name: "MeasurementEventsLifecycle", package: "MeasurementEvents"),
            ],
            path: "Sources/with-lifecycle",
            swiftSettings: [.define("USES_LIFECYCLE")]),
        .executableTarget(
            name: "all-capabilities",
            dependencies: [
                .product(name: "MeasurementEvents", package: "MeasurementEvents"),
                .product(name: "MeasurementEventsAggregator", package: "MeasurementEvents"),
                .product(name: "MeasurementEventsHTTP", package: "MeasurementEvents"),
                .product(name: "MeasurementEventsPlan", package: "MeasurementEvents"),
                .product(name: "MeasurementEventsStandard", package: "MeasurementEvents"),
                .product(name: "MeasurementEventsLifecycle", package: "MeasurementEvents"),
            ],
            path: "Sources/all-capabilities",
            swiftSettings: [.define("USES_PLAN"), .define("USES_STANDARD_CALLS"), .define("USES_LIFECYCLE")]),
    ],
    swiftLanguageModes: [.v6]
)
