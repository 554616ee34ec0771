// Consent by purpose from a consent platform that speaks IAB TCF v2.2: IABTCFConsentSource reads
// the IABTCF_* keys the platform writes, maps TCF purposes to the app's, and delivers each change
// once. The run writes what a platform writes when the user consents to TCF purposes 1, 3 and 4
// (a TC string IAB Tech Lab published) and checks what the source delivers.
import Foundation
import MeasurementEventsAggregator
import MeasurementEventsConsentSources

// In an app the platform's SDK writes to UserDefaults.standard; here a suite of this run only,
// removed at the end.
let suiteName = "com.example.consent.snippet-\(ProcessInfo.processInfo.processIdentifier)"
let defaults = UserDefaults(suiteName: suiteName)!
let delivered = Delivered()

// snippet.show
var mapping = TCFPurposeMapping.standard
mapping[.personalization] = [1, 3, 4]  // this app personalises ads, not content

let consent = IABTCFConsentSource(
    defaults: defaults,  // in an app: UserDefaults.standard, the default
    mapping: mapping,
    problemHandler: { problem in print("consent:", problem) })
consent.start { purposes in
    print(purposes.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key) \($0.value)" })
    delivered.append(purposes)  // the aggregator takes these updates
}

// What the platform writes once the user chose (each write is announced on Apple platforms).
let tcString = "CQNIGUAQNIGUAA4ACAFRBdFgALAAAAEgAAIgKRwBYAFgAbABgAGQCmgOHgpECkYBEQA4AFAAWAEUARAAAAAA"
defaults.set(1, forKey: "IABTCF_gdprApplies")
defaults.set(tcString, forKey: "IABTCF_TCString")
defaults.set("10110000000", forKey: "IABTCF_PurposeConsents")
consent.refresh()  // swift-corelibs-foundation announces none of these writes
// snippet.end

consent.stop()
defaults.removePersistentDomain(forName: suiteName)
let expected: [[ConsentPurpose: Consent]] = [
    [
        .analytics: .pendingHolding, .advertising: .pendingHolding, .personalization: .pendingHolding,
        .functional: .pendingHolding,
    ],
    [.analytics: .denied, .advertising: .denied, .personalization: .granted, .functional: .granted],
]
guard delivered.all == expected else {
    print("error: the source delivered \(delivered.all), expected \(expected)")
    exit(1)
}

/// What the source delivered, from whichever thread.
final class Delivered: @unchecked Sendable {
    // @unchecked: `updates` is only touched under `lock`.
    private let lock = NSLock()
    private var updates: [[ConsentPurpose: Consent]] = []

    func append(_ consents: [ConsentPurpose: Consent]) {
        lock.lock()
        updates.append(consents)
        lock.unlock()
    }

    var all: [[ConsentPurpose: Consent]] {
        lock.lock()
        defer { lock.unlock() }
        return updates
    }
}
