import Benchmark
import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsAmplitude
import MeasurementEventsGA4
import MeasurementEventsHTTP
import MeasurementEventsOTLP

// The HTTP delivery side: vendor encoders and the disk queue behind `HTTPTracker`.
// Names use underscores, as in BusBenchmarks.

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .mallocCountTotal],
        maxDuration: .seconds(1)
    )
    registerEncoders()
    registerDiskQueue()
}

/// 100 events like the bus delivers them: a few args each, ids and timestamps set.
let sampleBatch: [QueuedEvent] = (0..<100).map { index in
    var event = MeasurementEvent(
        "feed/item_tapped", type: .click, category: "feed",
        args: ["item_id": .string("item-\(index)"), "position": .int(index), "ratio": .double(0.5), "promoted": .bool(index.isMultiple(of: 2))],
        timestamp: Date(timeIntervalSince1970: 1_700_000_000 + Double(index)))
    event.attribution = EventAttribution(
        identity: EventIdentity(userID: "user-12345", anonymousID: "anonymous-0001"), sessionID: 1_700_000_000_000,
        context: EventContext(
            app: .init(name: "Bench", version: "1.0", build: "1", bundleID: "com.example.bench"),
            os: .init(name: "iOS", version: "17.2"), device: .init(model: "iPhone15,2", manufacturer: "Apple"),
            locale: "en-US", timeZone: "Europe/Berlin"))
    return QueuedEvent(event: event)
}

/// 7. One batch of 100 events per vendor encoder, split at the vendor's per-request limit
/// (GA4 takes 25 events per request, so 4 requests).
func registerEncoders() {
    let context = BatchContext(sentAt: Date(timeIntervalSince1970: 1_700_000_100))
    let encoders: [(String, any BatchEncoder)] = [
        ("Amplitude", AmplitudeEncoder(apiKey: "benchmark-key")),
        ("GA4", GA4Encoder(measurementID: "G-BENCHMARK", apiSecret: "secret")),
        ("Segment", SegmentEncoder(writeKey: "benchmark-key")),
    ]
    for (vendor, encoder) in encoders {
        Benchmark("Encode_100_events_\(vendor)") { benchmark in
            var bytes = 0
            var start = 0
            while start < sampleBatch.count {
                let end = min(start + encoder.limits.maximumEvents, sampleBatch.count)
                let batch = encoder.encode(Array(sampleBatch[start..<end]), context: context)
                guard let request = batch.request, batch.rejected.isEmpty else {
                    return benchmark.error("\(vendor) rejected the sample batch: \(batch.rejected)")
                }
                bytes += request.body.count
                start = end
            }
            blackHole(bytes)
        }
    }
}

/// A transport that never answers: uploads stay in flight, so everything tracked stays queued.
struct SilentTransport: HTTPTransport {
    func send(
        _ request: HTTPRequest, timeout: TimeInterval,
        completion: @escaping @Sendable (Result<HTTPResponse, any Error>) -> Void
    ) {}
}

func makeQueueingTracker(in directory: URL) throws -> HTTPTracker {
    var configuration = HTTPTracker.Configuration()
    configuration.transport = SilentTransport()
    configuration.flushInterval = nil
    configuration.maximumQueuedEvents = 1_000_000
    configuration.logHandler = { _ in }
    return try HTTPTracker(encoder: SegmentEncoder(writeKey: "benchmark-key"), directory: directory, configuration: configuration)
}

func temporaryDirectory() -> URL {
    FileManager.default.temporaryDirectory.appendingPathComponent("measurement-events-bench-\(UUID().uuidString)")
}

/// 9. `HTTPTracker.track` appends each event to the disk queue (one write(2) each).
func registerDiskQueue() {
    Benchmark(
        "DiskQueue_enqueue",
        configuration: .init(scalingFactor: .kilo)
    ) { benchmark, tracker in
        for index in benchmark.scaledIterations {
            do { try tracker.track(sampleBatch[index % 100].event) } catch {
                return benchmark.error("track failed: \(error)")
            }
        }
    } setup: { () -> HTTPTracker in
        try makeQueueingTracker(in: temporaryDirectory())
    }

    Benchmark(
        "DiskQueue_200000_queued_peak_memory",
        configuration: .init(
            metrics: [.wallClock, .throughput, .mallocCountTotal, .peakMemoryResident, .peakMemoryResidentDelta],
            maxDuration: .seconds(30), maxIterations: 3)
    ) { benchmark in
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            let tracker = try makeQueueingTracker(in: directory)
            benchmark.startMeasurement()
            for index in 0..<200_000 { try tracker.track(sampleBatch[index % 100].event) }
            benchmark.stopMeasurement()
            if tracker.diagnostics.queued < 199_000 {
                benchmark.error("expected about 200,000 queued events, found \(tracker.diagnostics.queued)")
            }
        } catch {
            benchmark.error("disk queue failed: \(error)")
        }
    }

    // Issue 11.8: a burst through an aggregator, whose in-flight bound keeps memory flat while
    // posts outrun the disk writes. The losses are the ones the overflow policy counts.
    Benchmark(
        "Aggregator_200000_burst_into_HTTPTracker_peak_memory",
        configuration: .init(
            metrics: [
                .wallClock, .peakMemoryResident, .peakMemoryResidentDelta,
                .custom("droppedInFlight", useScalingFactor: false), .custom("queued", useScalingFactor: false),
            ],
            maxDuration: .seconds(60), maxIterations: 3)
    ) { benchmark in
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            let center = NotificationCenter()
            let tracker = try makeQueueingTracker(in: directory)
            var configuration = EventAggregator.Configuration()
            configuration.identityStore = .inMemory  // a benchmark: nothing written to the home folder
            let aggregator = EventAggregator(
                center: center, filter: .allowAll, trackers: [tracker], configuration: configuration)
            aggregator.start()
            benchmark.startMeasurement()
            for index in 0..<200_000 {
                MeasurementEvent.post("feed/item_tapped", args: ["item_id": "42", "position": index], to: center)
            }
            aggregator.waitUntilDelivered()
            benchmark.stopMeasurement()
            let dropped = aggregator.diagnostics.droppedInFlight
            let queued = tracker.diagnostics.queued
            benchmark.measurement(.custom("droppedInFlight", useScalingFactor: false), dropped)
            benchmark.measurement(.custom("queued", useScalingFactor: false), queued)
            if queued + dropped != 200_000 {
                benchmark.error("expected queued + dropped = 200,000, found \(queued) + \(dropped)")
            }
        } catch {
            benchmark.error("disk queue failed: \(error)")
        }
    }
}
