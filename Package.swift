// swift-tools-version: 6.2
import PackageDescription

// Each capability is its own module. The sections below are kept apart on purpose,
// so that work on one module never touches the lines of another.

// MARK: Core bus and test kit
let coreTargets: [Target] = [
    // C11 atomics for the posting path (our own C target: no package dependency).
    .target(name: "CMeasurementAtomics"),
    // The bus: what a feature module imports to post, declare and test its events.
    .target(name: "MeasurementEvents", dependencies: ["CMeasurementAtomics"]),
    // The app's side of the bus: the aggregator, its delivery pipeline, identity, sessions,
    // consent, the tracking plan's checks, processors and the basic trackers.
    .target(name: "MeasurementEventsAggregator", dependencies: ["MeasurementEvents", "CMeasurementAtomics"]),
    .target(
        name: "MeasurementEventsTesting",
        dependencies: ["MeasurementEvents", "MeasurementEventsAggregator"]
    ),
    .testTarget(
        name: "MeasurementEventsTests",
        dependencies: ["MeasurementEvents", "MeasurementEventsAggregator", "MeasurementEventsTesting", "DemoFeed"]
    ),
    .testTarget(
        name: "MeasurementEventsAggregatorTests",
        dependencies: [
            "MeasurementEventsAggregator", "MeasurementEvents", "MeasurementEventsTesting", "DemoFeed", "DemoServer",
        ]
    ),
    .testTarget(
        name: "MeasurementEventsTestingTests",
        dependencies: ["MeasurementEvents", "MeasurementEventsAggregator", "MeasurementEventsTesting"]
    ),
]
let coreProducts: [Product] = [
    .library(name: "MeasurementEvents", targets: ["MeasurementEvents"]),
    .library(name: "MeasurementEventsAggregator", targets: ["MeasurementEventsAggregator"]),
    .library(name: "MeasurementEventsTesting", targets: ["MeasurementEventsTesting"]),
]

// MARK: Catalogs and the generator
let generatorTargets: [Target] = [
    // Parses, validates and writes; everything the CLI and the plugin do, testable in-process.
    .target(name: "MeasurementEventsGenerator", dependencies: ["MeasurementEvents", "MeasurementEventsAggregator", "MeasurementEventsJSON"]),
    .executableTarget(name: "measurement-events", dependencies: ["MeasurementEventsGenerator", "MeasurementEventsInspectorServer"]),
    .plugin(
        name: "GenerateMeasurementEvents",
        capability: .command(
            intent: .custom(
                verb: "generate-measurement-events",
                description: "Writes events_<Module>.swift into each module's folder (Sources/<Module>/ or the target's path:) from each catalog Events/<Module>.json"),
            permissions: [
                .writeToPackageDirectory(
                    reason: "Writes the generated events_<Module>.swift files, from the catalogs in Events/, into each module's folder (Sources/<Module>/ or the target's path:) so that they are committed and compiled with the module")
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
        dependencies: ["MeasurementEventsGenerator", "MeasurementEvents", "MeasurementEventsAggregator", "MeasurementEventsGeneratorGolden", "DemoFeed", "DemoSettings"]
    ),
]
// The CLI and the plugin are the supported interface; the generator library is a tool, not API
// (its declarations are `package`), so it is no product.
let generatorProducts: [Product] = [
    .executable(name: "measurement-events", targets: ["measurement-events"]),
    .plugin(name: "GenerateMeasurementEvents", targets: ["GenerateMeasurementEvents"]),
]

// MARK: Tracking plan and the strict JSON parser
let planTargets: [Target] = [
    // The strict JSON parser (positions, duplicate keys, paths) that the plan, the generator and the
    // HTTP encoders share: a target of this package, not a product, so nothing outside depends on it.
    .target(name: "MeasurementEventsJSON", dependencies: ["MeasurementEvents"]),
    .testTarget(name: "MeasurementEventsJSONTests", dependencies: ["MeasurementEventsJSON"]),
    .target(name: "MeasurementEventsPlan", dependencies: ["MeasurementEvents", "MeasurementEventsAggregator", "MeasurementEventsJSON"]),
    .testTarget(
        name: "MeasurementEventsPlanTests",
        dependencies: ["MeasurementEventsPlan", "MeasurementEvents", "MeasurementEventsAggregator", "MeasurementEventsTesting"]
    ),
]
let planProducts: [Product] = [
    .library(name: "MeasurementEventsPlan", targets: ["MeasurementEventsPlan"]),
]

// MARK: Impression tracking
let impressionTargets: [Target] = [
    // PrivacyInfo.xcprivacy: Apple's privacy manifest (system boot time, for the impression clock).
    .target(
        name: "ImpressionTracking", dependencies: ["MeasurementEvents", "MeasurementEventsAggregator"],
        resources: [.copy("PrivacyInfo.xcprivacy")]
    ),
    .testTarget(
        name: "ImpressionTrackingTests",
        dependencies: ["ImpressionTracking", "MeasurementEvents", "MeasurementEventsAggregator", "MeasurementEventsTesting"]
    ),
]
let impressionProducts: [Product] = [
    .library(name: "ImpressionTracking", targets: ["ImpressionTracking"]),
]

// MARK: Trigger-action events
let triggerTargets: [Target] = [
    .target(name: "EventTriggers", dependencies: ["MeasurementEvents", "MeasurementEventsAggregator", "MeasurementEventsPlan"]),
    .testTarget(
        name: "EventTriggersTests", dependencies: ["EventTriggers", "MeasurementEvents", "MeasurementEventsAggregator", "MeasurementEventsPlan"]
    ),
]
let triggerProducts: [Product] = [
    .library(name: "EventTriggers", targets: ["EventTriggers"]),
]

// MARK: HTTP delivery
let httpTargets: [Target] = [
    // The system zlib, for gzip request bodies: part of every Apple SDK; Debian's zlib1g-dev.
    .systemLibrary(name: "CZlib", providers: [.apt(["zlib1g-dev"])]),
    // PrivacyInfo.xcprivacy: Apple's privacy manifest (file metadata, for the disk queue).
    .target(
        name: "MeasurementEventsHTTP", dependencies: ["MeasurementEvents", "MeasurementEventsAggregator", "MeasurementEventsStandardValues", "CZlib"],
        resources: [.copy("PrivacyInfo.xcprivacy")]
    ),
    // A tiny HTTP/1.1 server on loopback with scripted replies: for the tests and the demo.
    // Not a product: no package that depends on this one sees it; a fixture, so not in Sources/.
    .target(
        name: "LoopbackCollector", dependencies: ["MeasurementEventsHTTP", "MeasurementEventsSockets"],
        path: "Tests/Fixtures/LoopbackCollector"),
    // Sample batches and standard calls the encoders' tests share (HTTP's and each vendor's).
    .target(
        name: "EncoderTestSupport",
        dependencies: ["MeasurementEvents", "MeasurementEventsAggregator", "MeasurementEventsHTTP"],
        path: "Tests/Fixtures/EncoderTestSupport"),
    .executableTarget(
        name: "http-crash-child",
        dependencies: ["MeasurementEventsHTTP"],
        path: "Tests/HTTPCrashChild"
    ),
    // The fault run of issue 49: trackers posting from 8 threads against a collector that fails
    // 30 % of requests; run by HTTP1TransportFaultRunTests and Benchmarks/Scripts/http_fault_run.sh.
    .executableTarget(
        name: "http-fault-child",
        dependencies: ["MeasurementEvents", "MeasurementEventsAggregator", "MeasurementEventsHTTP", "LoopbackCollector"],
        path: "Tests/HTTPFaultChild"
    ),
    // The outage run of issue 49: a server's aggregator posting from 8 tasks while its collector
    // stalls, then answers 503, then heals; run by Benchmarks/Scripts/http_outage_run.sh.
    .executableTarget(
        name: "http-outage-child",
        dependencies: ["MeasurementEvents", "MeasurementEventsAggregator", "MeasurementEventsHTTP", "LoopbackCollector"],
        path: "Tests/HTTPOutageChild"
    ),
    // The child process of LockedLaunchTests: an app launched before the device's first unlock.
    .executableTarget(
        name: "locked-launch-child",
        dependencies: ["MeasurementEventsAggregator", "MeasurementEventsHTTP", "MeasurementEventsLifecycle"],
        path: "Tests/LockedLaunchChild"
    ),
    .testTarget(
        name: "MeasurementEventsHTTPTests",
        // The generator reads every catalog of the repository for the personal-data wire test.
        dependencies: [
            "MeasurementEvents", "MeasurementEventsAggregator", "MeasurementEventsHTTP", "MeasurementEventsStandard", "LoopbackCollector",
            "MeasurementEventsGenerator", "MeasurementEventsGA4", "MeasurementEventsAmplitude", "MeasurementEventsOTLP",
            "EncoderTestSupport",
        ]
    ),
]
let httpProducts: [Product] = [
    .library(name: "MeasurementEventsHTTP", targets: ["MeasurementEventsHTTP"]),
    .library(name: "MeasurementEventsGA4", targets: ["MeasurementEventsGA4"]),
    .library(name: "MeasurementEventsAmplitude", targets: ["MeasurementEventsAmplitude"]),
    .library(name: "MeasurementEventsOTLP", targets: ["MeasurementEventsOTLP"]),
]

// MARK: Vendors beyond Segment, one module each: an app links only the encoders it uses (issue 34)
let vendorDependencies: [Target.Dependency] = [
    "MeasurementEvents", "MeasurementEventsAggregator", "MeasurementEventsHTTP", "MeasurementEventsJSON",
    "MeasurementEventsStandardValues",
]
let vendorTestDependencies: [Target.Dependency] = [
    "MeasurementEvents", "MeasurementEventsAggregator", "MeasurementEventsHTTP", "MeasurementEventsStandard",
    "LoopbackCollector", "EncoderTestSupport",
]
let vendorTargets: [Target] = [
    .target(name: "MeasurementEventsGA4", dependencies: vendorDependencies),
    .testTarget(name: "MeasurementEventsGA4Tests", dependencies: ["MeasurementEventsGA4"] + vendorTestDependencies),
    .target(name: "MeasurementEventsAmplitude", dependencies: vendorDependencies),
    .testTarget(
        name: "MeasurementEventsAmplitudeTests", dependencies: ["MeasurementEventsAmplitude"] + vendorTestDependencies),
    .target(name: "MeasurementEventsOTLP", dependencies: vendorDependencies),
    .testTarget(name: "MeasurementEventsOTLPTests", dependencies: ["MeasurementEventsOTLP"] + vendorTestDependencies),
]

// MARK: App lifecycle
let lifecycleTargets: [Target] = [
    .target(name: "MeasurementEventsLifecycle", dependencies: ["MeasurementEvents", "MeasurementEventsAggregator"]),
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

// MARK: Standard calls (screen views, orders, aliases, errors, deep links, timers) and their UI layer
let standardTargets: [Target] = [
    // Its own module: the catalog's generated file imports MeasurementEvents, so it cannot live
    // in the core; and apps that send only plain events do not carry it.
    .target(
        name: "MeasurementEventsStandard",
        dependencies: ["MeasurementEvents", "MeasurementEventsAggregator", "MeasurementEventsStandardValues"]),
    // The standard events as values (orders, screen views, decimal amounts), which the module
    // above posts and every vendor's encoder reads from queued events: an app that sends to a
    // vendor links these few types, not the standard calls' processor, deep links and catalog
    // (issue 34: 98 KB of the one-event app). Re-exported by MeasurementEventsStandard.
    .target(name: "MeasurementEventsStandardValues", dependencies: ["MeasurementEvents"]),
    // The SwiftUI modifier and the UIKit helper; compiled only where those frameworks exist.
    .target(name: "MeasurementEventsUI", dependencies: ["MeasurementEvents", "MeasurementEventsAggregator", "MeasurementEventsStandard"]),
    .testTarget(name: "MeasurementEventsStandardValuesTests", dependencies: ["MeasurementEventsStandardValues", "MeasurementEvents"]),
    .testTarget(
        name: "MeasurementEventsStandardTests",
        dependencies: ["MeasurementEventsStandard", "MeasurementEvents", "MeasurementEventsAggregator", "MeasurementEventsTesting", "MeasurementEventsPlan"]
    ),
]
let standardProducts: [Product] = [
    .library(name: "MeasurementEventsStandard", targets: ["MeasurementEventsStandard"]),
    .library(name: "MeasurementEventsStandardValues", targets: ["MeasurementEventsStandardValues"]),
    .library(name: "MeasurementEventsUI", targets: ["MeasurementEventsUI"]),
]

// MARK: Demo
let demoTargets: [Target] = [
    // The demo's feature modules: fixtures, so not in Sources/. Their catalogs are Events/DemoFeed.json
    // and Events/DemoSettings.json; the generator reads these paths from the manifest.
    .target(name: "DemoFeed", dependencies: ["MeasurementEvents"], path: "Tests/Fixtures/Demo/DemoFeed"),
    .target(name: "DemoSettings", dependencies: ["MeasurementEvents"], path: "Tests/Fixtures/Demo/DemoSettings"),
    // `measurement-demo server`'s simulation of a server, which a test also runs (smaller).
    .target(
        name: "DemoServer", dependencies: ["MeasurementEvents", "MeasurementEventsAggregator"],
        path: "Tests/Fixtures/Demo/DemoServer"),
    // Not a product: `swift run measurement-demo` runs it in this package (SwiftPM makes an
    // executable target of the root package runnable by its name), and no package that
    // depends on this one sees it.
    .executableTarget(
        name: "measurement-demo",
        dependencies: [
            "MeasurementEvents", "MeasurementEventsAggregator",
            "MeasurementEventsPlan",
            "DemoFeed",
            "DemoSettings",
            "DemoServer",
            "EventTriggers",
            "LoopbackCollector",
            "MeasurementEventsHTTP",
            "MeasurementEventsGA4",
            "MeasurementEventsAmplitude",
            "MeasurementEventsOTLP",
            "ImpressionTracking",
            "MeasurementEventsStandard",
            "MeasurementEventsInspector",
        ],
        path: "Sources/MeasurementDemo",
        resources: [.copy("tracking-plan.json")]
    ),
]

// MARK: Event inspector
let inspectorTargets: [Target] = [
    // App side: sends each event's trail to `measurement-events inspect`.
    .target(name: "MeasurementEventsInspector", dependencies: ["MeasurementEvents", "MeasurementEventsAggregator"]),
    // The inspector itself (POSIX sockets, the page, the vendor checks), testable in-process;
    // the CLI runs it. Not a product.
    .target(
        name: "MeasurementEventsInspectorServer",
        dependencies: [
            "MeasurementEvents", "MeasurementEventsAggregator", "MeasurementEventsHTTP", "MeasurementEventsGenerator", "MeasurementEventsSockets",
            "MeasurementEventsGA4", "MeasurementEventsAmplitude", "MeasurementEventsOTLP",
        ]
    ),
    // A listening TCP socket and its accept loop, shared by the inspector and the tests' loopback
    // collector. Not a product.
    .target(name: "MeasurementEventsSockets"),
    .testTarget(
        name: "MeasurementEventsInspectorTests",
        dependencies: [
            "MeasurementEventsInspector", "MeasurementEventsInspectorServer", "MeasurementEvents",
            "MeasurementEventsHTTP", "MeasurementEventsTesting", "LoopbackCollector",
        ]
    ),
]
let inspectorProducts: [Product] = [
    .library(name: "MeasurementEventsInspector", targets: ["MeasurementEventsInspector"]),
]

// MARK: Consent sources
let consentTargets: [Target] = [
    // Feeds consent by purpose from a consent platform: the ConsentSource protocol and the IAB TCF
    // v2.2 source that reads the IABTCF_* keys from UserDefaults (its TC string parser is
    // platform-free).
    .target(name: "MeasurementEventsConsentSources", dependencies: ["MeasurementEvents", "MeasurementEventsAggregator"]),
    .testTarget(
        name: "MeasurementEventsConsentSourcesTests",
        dependencies: ["MeasurementEventsConsentSources", "MeasurementEvents", "MeasurementEventsAggregator"]
    ),
]
let consentProducts: [Product] = [
    .library(name: "MeasurementEventsConsentSources", targets: ["MeasurementEventsConsentSources"]),
]

// The lowest deployment targets Xcode 26 supports (developer.apple.com/support/xcode, "Deployment
// Targets"), which the manifest's tools version, 6.2, needs; Mac Catalyst follows iOS. Raised from
// iOS 13, macOS 10.15, tvOS 13, watchOS 6: a breaking change for apps that deploy lower, which
// stay on 3.x (CHANGELOG, 4.0.0).
let package = Package(
    name: "MeasurementEvents",
    platforms: [.iOS(.v15), .macCatalyst(.v15), .macOS(.v11), .tvOS(.v15), .watchOS(.v8), .visionOS(.v1)],
    products: coreProducts + generatorProducts + planProducts + impressionProducts + triggerProducts + httpProducts + lifecycleProducts + standardProducts
        + inspectorProducts + consentProducts,
    targets: coreTargets + generatorTargets + planTargets + impressionTargets + triggerTargets + httpTargets + lifecycleTargets + standardTargets + demoTargets
        + inspectorTargets + vendorTargets + consentTargets,
    swiftLanguageModes: [.v6]
)

// MARK: Compiled for size
// The modules an app links that run off the posting path are compiled for size in release
// builds (-Osize): an analytics SDK is judged by what it adds to the app, and none of these is
// on the path of a post (Benchmarks/SizeBudget: the one-event app is 41 KB smaller, all
// capabilities 94 KB). The core and the aggregator, which post and deliver, keep -O: with
// -Osize the aggregator saved 51 KB more but cost a post instructions
// (Benchmarks/Scripts/callgrind_post.sh), even with its posting path marked for speed. The
// command-line tool's modules and the test kit keep -O too.
// A package that depends on this one by version accepts the flag since SwiftPM 6.2, for a
// manifest of tools version 6.2 or later (swiftlang/swift-package-manager#8951); older
// SwiftPMs refuse it, hence this manifest's tools version.
let sizeOptimizedModules: Set<String> = [
    "MeasurementEventsHTTP", "MeasurementEventsGA4", "MeasurementEventsAmplitude", "MeasurementEventsOTLP",
    "MeasurementEventsPlan", "MeasurementEventsJSON", "ImpressionTracking", "EventTriggers", "MeasurementEventsLifecycle",
    "MeasurementEventsStandard", "MeasurementEventsStandardValues", "MeasurementEventsUI", "MeasurementEventsInspector",
    "MeasurementEventsConsentSources",
]
for target in package.targets where sizeOptimizedModules.contains(target.name) {
    target.swiftSettings = (target.swiftSettings ?? []) + [.unsafeFlags(["-Osize"], .when(configuration: .release))]
}
precondition(
    Set(package.targets.map(\.name)).isSuperset(of: sizeOptimizedModules),
    "Package.swift: a module compiled for size is not a target: \(sizeOptimizedModules.subtracting(package.targets.map(\.name)))")

// MARK: Dead stripping by function
// The linker's dead stripping (`--gc-sections`, `-dead_strip`) keeps what an app reaches and
// drops the rest, but swiftc gets in its way twice:
// - on ELF platforms it puts the functions of one source file in one section unless told
//   otherwise, so that an app kept the code of every file it reached, called or not.
//   `-function-sections` gives each function a section (Benchmarks/SizeBudget: the one-event app
//   91,736 bytes smaller, all capabilities 120,520). Apple's linker already strips function by
//   function (Mach-O subsections), so this flag is for Linux and Android only;
// - on every platform it marks each public function "used" (`llvm.used`: on ELF a section the
//   linker must keep, on Mach-O a `no_dead_strip` symbol), so that an app kept all the public
//   API of every module it linked, called or not. `-internalize-at-link` leaves public
//   functions to the linker like internal ones: an app keeps those it calls (one-event 148,568
//   bytes smaller on Linux, all capabilities 193,320). A public function an app does not call is
//   then not in its executable; this package looks none up by name (no `dlsym`, no `@_cdecl`,
//   no `@objc`), and a shared library or framework keeps what it exports either way.
// Both change what the linker may drop, not the code.
for target in package.targets where [.regular, .executable].contains(target.type) && target.name != "CMeasurementAtomics" {
    target.swiftSettings =
        (target.swiftSettings ?? []) + [
            .unsafeFlags(["-Xfrontend", "-internalize-at-link"], .when(configuration: .release)),
            .unsafeFlags(
                ["-Xfrontend", "-function-sections"], .when(platforms: [.linux, .android], configuration: .release)),
        ]
}
