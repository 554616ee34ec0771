import Foundation
import MeasurementEvents
import MeasurementEventsAggregator

/// Consent by purpose from any consent platform (CMP) that speaks IAB TCF v2.2: it reads the
/// `IABTCF_*` keys the platform writes to `UserDefaults`, maps TCF purposes to the app's by a
/// ``TCFPurposeMapping``, and delivers each change once.
///
/// A TCF platform's SDK writes the user's choices under documented keys of the app's
/// `UserDefaults.standard` (IAB Tech Lab, "Consent Management Platform API" v2.2, In-App Details),
/// so an app wires nothing by hand:
///
/// ```swift
/// let consent = IABTCFConsentSource()        // UserDefaults.standard, TCFPurposeMapping.standard
/// consent.start { purposes in
///     // [.analytics: .granted, .advertising: .denied, .personalization: .denied, .functional: .granted]
/// }
/// ```
///
/// What it reads, and what follows (the article <doc:ConsentFromAConsentPlatform> has the details):
/// - `IABTCF_gdprApplies` unset: every purpose is `Consent.pendingHolding`.
///   `0`, the GDPR does not apply: every purpose is granted. `1`: the purposes below decide.
/// - `IABTCF_PurposeConsents` and `IABTCF_TCString`: the TCF purposes consented. While neither
///   holds a choice, pending; where both do, a TCF purpose counts only when both say so.
/// - `IABTCF_PurposeLegitimateInterests` (and the TC string's PurposesLITransparency): only for
///   the purposes the mapping accepts legitimate interest for; none by default.
/// - `IABTCF_VendorConsents` (and the TC string's vendor consents): when the app names its
///   `vendorId`, every purpose that needs a TCF purpose also needs that vendor's consent.
///
/// A malformed value (a TC string that does not decode, `IABTCF_PurposeConsents` that is `"01x1"`,
/// empty or 10,000 characters long) is ignored and reported to `problemHandler` once, with what
/// was found, what was expected and where; nothing traps.
///
/// Changes are observed through `UserDefaults.didChangeNotification`, which Apple's Foundation
/// posts on the writing thread each time the app's process changes its defaults (the platform's
/// SDK writing a key included). A write the notification does not announce (another process
/// writing an App Group's suite; on Linux, any `set(_:forKey:)`, for swift-corelibs-foundation
/// posts it only from `setPersistentDomain(_:forName:)` and `removePersistentDomain(forName:)`)
/// is read at the next ``refresh()``. An update is delivered only when a purpose's consent
/// changed.
public final class IABTCFConsentSource: ConsentSource, @unchecked Sendable {
    // @unchecked: what changes is in `state`, behind its lock; `defaults` is a UserDefaults,
    // which Apple documents as thread-safe; `delivering` is a DispatchGroup; the rest is constant.
    // Lock: `state` only, never held while calling the update or the problem handler (user code),
    // nor while reading the defaults. Invariant: one thread at a time reads and delivers
    // (`State.isReading`), so updates arrive in the order of the reads, never two at once.

    /// The TCF purposes each purpose of ours needs.
    public let mapping: TCFPurposeMapping
    /// The Global Vendor List id whose consent every purpose that needs a TCF purpose needs too,
    /// or nil (the default) for none.
    public let vendorId: Int?

    private let defaults: UserDefaults
    private let problemHandler: (@Sendable (String) -> Void)?
    /// What is wrong with the mapping and the vendor id, reported at the first read.
    private let configurationProblems: [String]
    private let state = LockedValue(State())
    /// Entered for each update under way; ``stop()`` waits on it.
    private let delivering = DispatchGroup()

    /// A source that reads the `IABTCF_*` keys of `defaults`.
    ///
    /// ```swift
    /// var mapping = TCFPurposeMapping.standard
    /// mapping.legitimateInterestPurposes = [8, 9, 10]
    /// let consent = IABTCFConsentSource(
    ///     defaults: UserDefaults(suiteName: "group.com.example.consent")!,
    ///     mapping: mapping,
    ///     vendorId: 755,
    ///     problemHandler: { problem in print("consent:", problem) })
    /// ```
    ///
    /// - Parameters:
    ///   - defaults: where the consent platform writes: `UserDefaults.standard` (the default), or
    ///     the suite the app configured its platform to write to.
    ///   - mapping: the TCF purposes each purpose of ours needs; ``TCFPurposeMapping/standard``
    ///     by default.
    ///   - vendorId: a Global Vendor List id (1 to 65535) whose consent is needed too, or nil.
    ///   - problemHandler: told once of each distinct problem (a malformed key, a mapping or
    ///     vendor id that cannot be met), on the thread that read it, outside every lock; nil to
    ///     ignore them.
    public init(
        defaults: UserDefaults = .standard, mapping: TCFPurposeMapping = .standard, vendorId: Int? = nil,
        problemHandler: (@Sendable (String) -> Void)? = nil
    ) {
        self.defaults = defaults
        self.mapping = mapping
        self.vendorId = vendorId
        self.problemHandler = problemHandler
        var problems = mapping.problems
        if let vendorId, !(1...65_535).contains(vendorId) {
            problems.append(
                "IABTCFConsentSource: vendorId \(vendorId) is no Global Vendor List id (1 to 65535, 16 bits in the "
                    + "TC string); its consent is never given, so every purpose that needs a TCF purpose is denied "
                    + "wherever the GDPR applies")
        }
        configurationProblems = problems
    }

    deinit {
        if let observer = state.withLock({ $0.observer }) { NotificationCenter.default.removeObserver(observer) }
    }

    /// Starts feeding consent: reads the keys and calls `update` at once with every purpose of the
    /// mapping (pending ones included), then again at each change.
    ///
    /// Starting again replaces the closure (as ``stop()`` then `start`) and delivers the current
    /// state to the new one.
    ///
    /// ```swift
    /// consent.start { purposes in
    ///     print(purposes[.analytics] ?? .pendingHolding)
    /// }
    /// ```
    ///
    /// - Parameter update: takes the consent of each purpose of the mapping; called on the thread
    ///   that read the change (the platform's writing thread, or the caller of ``refresh()``),
    ///   never on two threads at once.
    public func start(_ update: @escaping @Sendable ([ConsentPurpose: Consent]) -> Void) {
        stop()
        let observer = NotificationCenter.default.addObserver(
            forName: UserDefaults.didChangeNotification, object: nil, queue: nil
        ) { [weak self] _ in
            // Which defaults changed does not matter: a platform may write through its own
            // UserDefaults object for the same suite. Reading the few keys again is cheap.
            self?.refresh()
        }
        let unused = state.withLock { state -> NSObjectProtocol? in
            guard state.observer == nil else { return observer }  // another start won the race
            state.update = update
            state.delivered = nil
            state.observer = observer
            return nil
        }
        if let unused { NotificationCenter.default.removeObserver(unused) }
        refresh()
    }

    /// Stops feeding consent. Once `stop()` returns the closure given to ``start(_:)`` is not
    /// called again: an update under way on another thread is waited for (called from inside the
    /// update, `stop()` returns at once). The update must therefore not wait for the thread that
    /// stops the source.
    ///
    /// ```swift
    /// consent.stop()
    /// ```
    public func stop() {
        let (observer, waits) = state.withLock { state -> (NSObjectProtocol?, Bool) in
            let observer = state.observer
            state.observer = nil
            state.update = nil
            state.delivered = nil
            return (observer, state.deliveringThread.map { $0 !== Thread.current } ?? false)
        }
        if let observer { NotificationCenter.default.removeObserver(observer) }
        if waits { delivering.wait() }
    }

    /// Reads the keys again and delivers the state if a purpose's consent changed.
    ///
    /// Apple's Foundation announces the platform's writes in this process, which call this on
    /// their own. Call it where nothing is announced: when the app returns to the foreground after
    /// another process (an app extension) wrote to a shared suite, or on Linux after writes with
    /// `set(_:forKey:)`.
    ///
    /// ```swift
    /// consent.refresh()
    /// ```
    ///
    /// The state is delivered before `refresh()` returns, unless another thread is reading at the
    /// same moment: that thread then reads again and delivers it.
    public func refresh() {
        guard state.withLock({ $0.requestRead() }) else { return }
        while state.withLock({ $0.takeRead() }) {
            let values = IABTCFValues(reading: defaults.object(forKey:), vendorId: vendorId, decode: decode)
            let consents = values.consents(under: mapping, needsVendor: vendorId != nil)
            let (problems, update) = state.withLock { state in
                let update = state.delivery(of: consents)
                // Entered under the lock that publishes `deliveringThread`, so that a stop()
                // that sees the thread also finds the group entered.
                if update != nil { delivering.enter() }
                return (state.unreported(configurationProblems + values.problems), update)
            }
            for problem in problems { problemHandler?(problem) }
            if let update {
                update(consents)
                state.withLock { $0.deliveringThread = nil }
                delivering.leave()
            }
        }
    }

    /// The TC string decoded, from the last decoding when it is the same text (a platform writes
    /// a dozen keys per choice, each announced, and the TC string is the longest).
    private func decode(_ text: String) -> Result<TCString, TCStringError> {
        if let last = state.withLock({ $0.lastDecoded }), last.text == text { return last.result }
        let result: Result<TCString, TCStringError>
        do throws(TCStringError) {
            result = .success(try TCString(text))
        } catch {
            result = .failure(error)
        }
        state.withLock { $0.lastDecoded = (text, result) }
        return result
    }

    /// Everything that changes, behind `IABTCFConsentSource.state`'s lock.
    private struct State {
        /// The most distinct problems reported; past it, one last message says so.
        static let problemLimit = 100

        var update: (@Sendable ([ConsentPurpose: Consent]) -> Void)?
        var observer: NSObjectProtocol?
        /// What the update was last given since it was set; nil: deliver the next read.
        var delivered: [ConsentPurpose: Consent]?
        /// A thread is reading and delivering; others only ask it to read again.
        var isReading = false
        /// The keys may have changed since the reading thread last read them.
        var needsRead = false
        /// The thread calling the update, while it does.
        var deliveringThread: Thread?
        var reported: Set<String> = []
        var isLimitReported = false
        var lastDecoded: (text: String, result: Result<TCString, TCStringError>)?

        /// Asks for a read; true when the caller is to read (no other thread is).
        mutating func requestRead() -> Bool {
            needsRead = true
            guard !isReading else { return false }
            isReading = true
            return true
        }

        /// True when the reading thread reads again; false ends its turn.
        mutating func takeRead() -> Bool {
            guard needsRead else {
                isReading = false
                return false
            }
            needsRead = false
            return true
        }

        /// The update to call with `consents`, when one is set and they changed.
        mutating func delivery(of consents: [ConsentPurpose: Consent]) -> (
            @Sendable ([ConsentPurpose: Consent]) -> Void
        )? {
            guard let update, delivered != consents else { return nil }
            delivered = consents
            deliveringThread = Thread.current
            return update
        }

        /// The problems not reported yet, now counted as reported.
        mutating func unreported(_ problems: [String]) -> [String] {
            var fresh: [String] = []
            for problem in problems where !reported.contains(problem) {
                guard reported.count < Self.problemLimit else {
                    if !isLimitReported {
                        isLimitReported = true
                        fresh.append(
                            "IABTCFConsentSource: \(Self.problemLimit) distinct problems reported; later ones are not")
                    }
                    break
                }
                reported.insert(problem)
                fresh.append(problem)
            }
            return fresh
        }
    }
}
