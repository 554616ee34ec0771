// swift-tools-version: 6.0
import PackageDescription

// Each capability is its own module. The sections below are kept apart on purpose,
// so that work on one module never touches the lines of another.

// MARK: Core bus and test kit
let coreTargets: [Target] = [
    .target(name: "MeasurementEvents"),
    .target(
        name: "MeasurementEventsTesting",
        dependencies: ["MeasurementEvents"]
    ),
    .testTarget(
        name: "MeasurementEventsTests",
        dependencies: ["MeasurementEvents", "MeasurementEventsTesting", "DemoFeed"]
    ),
    .testTarget(
        name: "MeasurementEventsTestingTests",
        dependencies: ["MeasurementEvents", "MeasurementEventsTesting"]
    ),
]
let coreProducts: [Product] = [
    .library(name: "MeasurementEvents", targets: ["MeasurementEvents"]),
    .library(name: "MeasurementEventsTesting", targets: ["MeasurementEventsTesting"]),
]

// MARK: Catalogs and the generator
let generatorTargets: [Target] = []
let generatorProducts: [Product] = []

// MARK: Impression tracking
let impressionTargets: [Target] = [
    .target(name: "ImpressionTracking", dependencies: ["MeasurementEvents"]),
    .testTarget(
        name: "ImpressionTrackingTests",
        dependencies: ["ImpressionTracking", "MeasurementEvents"]
    ),
]
let impressionProducts: [Product] = [
    .library(name: "ImpressionTracking", targets: ["ImpressionTracking"]),
]

// MARK: Trigger-action events
let triggerTargets: [Target] = []
let triggerProducts: [Product] = []

// MARK: HTTP delivery
let httpTargets: [Target] = [
    .target(name: "MeasurementEventsHTTP", dependencies: ["MeasurementEvents"]),
    // A tiny HTTP/1.1 server on loopback with scripted replies: for the tests and the demo.
    .target(name: "LoopbackCollector", path: "Tests/LoopbackCollector"),
    .executableTarget(
        name: "http-crash-child",
        dependencies: ["MeasurementEventsHTTP"],
        path: "Tests/HTTPCrashChild"
    ),
    .testTarget(
        name: "MeasurementEventsHTTPTests",
        dependencies: ["MeasurementEvents", "MeasurementEventsHTTP", "LoopbackCollector"]
    ),
]
let httpProducts: [Product] = [
    .library(name: "MeasurementEventsHTTP", targets: ["MeasurementEventsHTTP"]),
]

// MARK: Demo
let demoTargets: [Target] = [
    .target(name: "DemoFeed", dependencies: ["MeasurementEvents"]),
    .target(name: "DemoSettings", dependencies: ["MeasurementEvents"]),
    .executableTarget(
        name: "MeasurementDemo",
        dependencies: [
            "MeasurementEvents",
            "DemoFeed",
            "DemoSettings",
            "MeasurementEventsHTTP", "LoopbackCollector",
            "ImpressionTracking",
        ]
    ),
]
let demoProducts: [Product] = [
    .executable(name: "measurement-demo", targets: ["MeasurementDemo"]),
]

let package = Package(
    name: "MeasurementEvents",
    platforms: [.iOS(.v13), .macOS(.v10_15), .tvOS(.v13), .watchOS(.v6)],
    products: coreProducts + generatorProducts + impressionProducts + triggerProducts + httpProducts + demoProducts,
    targets: coreTargets + generatorTargets + impressionTargets + triggerTargets + httpTargets + demoTargets,
    swiftLanguageModes: [.v6]
)
