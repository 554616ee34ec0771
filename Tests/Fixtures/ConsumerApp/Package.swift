// swift-tools-version: 6.0
import PackageDescription

// A package that uses MeasurementEvents the way an app's feature modules would: it declares its
// events in Events/<Module>.json and generates Sources/<Module>/events_<Module>.swift with
// `swift package --allow-writing-to-package-directory generate-measurement-events`
// (or `measurement-events generate --package-path .`).
let package = Package(
    name: "ConsumerApp",
    platforms: [.iOS(.v15), .macOS(.v11), .tvOS(.v15), .watchOS(.v8)],
    dependencies: [
        // In an app: .package(url: "https://github.com/MeasurementEvents/MeasurementEvents.git", from: "3.0.0")
        .package(name: "MeasurementEvents", path: "../../..")
    ],
    targets: [
        .target(name: "Checkout", dependencies: [.product(name: "MeasurementEvents", package: "MeasurementEvents")]),
        .target(name: "Onboarding", dependencies: [.product(name: "MeasurementEvents", package: "MeasurementEvents")]),
        .testTarget(
            name: "CheckoutTests",
            dependencies: [
                "Checkout", "Onboarding", .product(name: "MeasurementEventsPlan", package: "MeasurementEvents"),
                .product(name: "MeasurementEventsTesting", package: "MeasurementEvents"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
