// swift-tools-version: 6.0
import PackageDescription

// Each capability is its own module. The sections below are kept apart on purpose,
// so that work on one module never touches the lines of another.

// MARK: Core bus and test kit
let coreTargets: [Target] = [
    // C11 atomics for the posting path (our own C target: no package dependency).
    .target(name: "CMeasurementAtomics"),
    .target(name: "MeasurementEvents", dependencies: ["CMeasurementAtomics"]),
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
let generatorTargets: [Target] = [
    // Parses, validates and writes; everything the CLI and the plugin do, testable in-process.
    .target(name: "MeasurementEventsGenerator", dependencies: ["MeasurementEvents"]),
    .executableTarget(name: "measurement-events", dependencies: ["MeasurementEventsGenerator"]),
    .plugin(
        name: "GenerateMeasurementEvents",
        capability: .command(
            intent: .custom(
                verb: "generate-measurement-events",
                description: "Writes Sources/<Module>/events_<Module>.swift from each catalog Events/<Module>.json"),
            permissions: [
                .writeToPackageDirectory(
                    reason: "Writes the generated events_<Module>.swift files, from the catalogs in Events/, into Sources/<Module>/ so that they are committed and compiled with the module")
            ]),
        dependencies: ["measurement-events"]
    ),
    // The golden files: a package layout (Events/, Sources/<Module>/) whose generated files are
    // compiled here, so a golden that is not valid Swift fails the build.
    .target(
        name: "MeasurementEventsGeneratorGolden",
        dependencies: ["MeasurementEvents"],
        path: "Tests/MeasurementEventsGeneratorGolden/Sources"
    ),
    .testTarget(
        name: "MeasurementEventsGeneratorTests",
        dependencies: ["MeasurementEventsGenerator", "MeasurementEvents", "MeasurementEventsGeneratorGolden", "DemoFeed", "DemoSettings"]
    ),
]
let generatorProducts: [Product] = [
    .library(name: "MeasurementEventsGenerator", targets: ["MeasurementEventsGenerator"]),
    .executable(name: "measurement-events", targets: ["measurement-events"]),
    .plugin(name: "GenerateMeasurementEvents", targets: ["GenerateMeasurementEvents"]),
]

// MARK: Impression tracking
let impressionTargets: [Target] = [
    // PrivacyInfo.xcprivacy: Apple's privacy manifest (system boot time, for the impression clock).
    .target(
        name: "ImpressionTracking", dependencies: ["MeasurementEvents"],
        resources: [.copy("PrivacyInfo.xcprivacy")]
    ),
    .testTarget(
        name: "ImpressionTrackingTests",
        dependencies: ["ImpressionTracking", "MeasurementEvents"]
    ),
]
let impressionProducts: [Product] = [
    .library(name: "ImpressionTracking", targets: ["ImpressionTracking"]),
]

// MARK: Trigger-action events
let triggerTargets: [Target] = [
    .target(name: "EventTriggers", dependencies: ["MeasurementEvents"]),
    .testTarget(name: "EventTriggersTests", dependencies: ["EventTriggers", "MeasurementEvents"]),
]
let triggerProducts: [Product] = [
    .library(name: "EventTriggers", targets: ["EventTriggers"]),
]

// MARK: HTTP delivery
let httpTargets: [Target] = [
    // PrivacyInfo.xcprivacy: Apple's privacy manifest (file metadata, for the disk queue).
    .target(
        name: "MeasurementEventsHTTP", dependencies: ["MeasurementEvents"],
        resources: [.copy("PrivacyInfo.xcprivacy")]
    ),
    // A tiny HTTP/1.1 server on loopback with scripted replies: for the tests and the demo.
    .target(name: "LoopbackCollector", path: "Tests/LoopbackCollector"),
    .executableTarget(
        name: "http-crash-child",
        dependencies: ["MeasurementEventsHTTP"],
        path: "Tests/HTTPCrashChild"
    ),
    .testTarget(
        name: "MeasurementEventsHTTPTests",
        // The generator reads every catalog of the repository for the personal-data wire test.
        dependencies: ["MeasurementEvents", "MeasurementEventsHTTP", "LoopbackCollector", "MeasurementEventsGenerator"]
    ),
]
let httpProducts: [Product] = [
    .library(name: "MeasurementEventsHTTP", targets: ["MeasurementEventsHTTP"]),
]

// MARK: App lifecycle
let lifecycleTargets: [Target] = [
    .target(name: "MeasurementEventsLifecycle", dependencies: ["MeasurementEvents"]),
    .testTarget(
        name: "MeasurementEventsLifecycleTests",
        dependencies: [
            "MeasurementEventsLifecycle", "MeasurementEvents", "MeasurementEventsTesting", "MeasurementEventsHTTP",
            "LoopbackCollector",
        ]
    ),
]
let lifecycleProducts: [Product] = [
    .library(name: "MeasurementEventsLifecycle", targets: ["MeasurementEventsLifecycle"]),
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
            "EventTriggers",
            "LoopbackCollector",
            "MeasurementEventsHTTP",
            "ImpressionTracking",
        ],
        resources: [.copy("tracking-plan.json")]
    ),
]
let demoProducts: [Product] = [
    .executable(name: "measurement-demo", targets: ["MeasurementDemo"]),
]

let package = Package(
    name: "MeasurementEvents",
    platforms: [.iOS(.v13), .macOS(.v10_15), .tvOS(.v13), .watchOS(.v6)],
    products: coreProducts + generatorProducts + impressionProducts + triggerProducts + httpProducts + lifecycleProducts + demoProducts,
    targets: coreTargets + generatorTargets + impressionTargets + triggerTargets + httpTargets + lifecycleTargets + demoTargets,
    swiftLanguageModes: [.v6]
)
