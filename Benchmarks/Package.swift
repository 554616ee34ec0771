// swift-tools-version: 6.1
import PackageDescription

// Benchmarks live in their own package so that the library's Package.swift keeps zero
// dependencies. Run them with `swift package --disable-sandbox benchmark` from this folder.
let package = Package(
    name: "MeasurementEventsBenchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "MeasurementEvents", path: ".."),
        .package(url: "https://github.com/ordo-one/package-benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        // Long-lived posting threads, shared by the benchmarks and the profiling driver.
        .target(name: "BenchmarkSupport", path: "Support/BenchmarkSupport"),
        .executableTarget(
            name: "BusBenchmarks",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "MeasurementEvents", package: "MeasurementEvents"),
                .product(name: "MeasurementEventsAggregator", package: "MeasurementEvents"),
                .product(name: "Benchmark", package: "package-benchmark"),
            ],
            path: "Benchmarks/BusBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "package-benchmark")]
        ),
        .executableTarget(
            name: "DeliveryBenchmarks",
            dependencies: [
                .product(name: "MeasurementEvents", package: "MeasurementEvents"),
                .product(name: "MeasurementEventsAggregator", package: "MeasurementEvents"),
                .product(name: "MeasurementEventsHTTP", package: "MeasurementEvents"),
                .product(name: "MeasurementEventsGA4", package: "MeasurementEvents"),
                .product(name: "MeasurementEventsAmplitude", package: "MeasurementEvents"),
                .product(name: "MeasurementEventsOTLP", package: "MeasurementEvents"),
                .product(name: "Benchmark", package: "package-benchmark"),
            ],
            path: "Benchmarks/DeliveryBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "package-benchmark")]
        ),
        .executableTarget(
            name: "ImpressionBenchmarks",
            dependencies: [
                .product(name: "ImpressionTracking", package: "MeasurementEvents"),
                .product(name: "Benchmark", package: "package-benchmark"),
            ],
            path: "Benchmarks/ImpressionBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "package-benchmark")]
        ),
        // Not a benchmark: a plain driver to run under a profiler.
        .executableTarget(
            name: "BusProfile",
            dependencies: [
                "BenchmarkSupport", .product(name: "MeasurementEvents", package: "MeasurementEvents"),
                .product(name: "MeasurementEventsAggregator", package: "MeasurementEvents"),
            ],
            path: "Profiling/BusProfile"
        ),
        // Not a benchmark either: posts into a real OTLP/HTTP collector for Scripts/server_throughput.sh.
        .executableTarget(
            name: "ServerThroughput",
            dependencies: [
                .product(name: "MeasurementEvents", package: "MeasurementEvents"),
                .product(name: "MeasurementEventsAggregator", package: "MeasurementEvents"),
                .product(name: "MeasurementEventsHTTP", package: "MeasurementEvents"),
                .product(name: "MeasurementEventsOTLP", package: "MeasurementEvents"),
            ],
            path: "Profiling/ServerThroughput"
        ),
    ],
    swiftLanguageModes: [.v6]
)
