/// Personal data: the args the registered catalogs mark `"pii"` are hashed before
/// ``EventAggregator/didReceive(_:)`` and the trackers see them.
extension EventAggregator {
    /// The merged catalogs of `configuration` and the processor that hashes their personal
    /// args (minus those sent in clear); no processor when nothing is left to hash.
    static func registering(_ configuration: Configuration) -> (RegisteredCatalogs, PersonalDataProcessor?) {
        let registered = RegisteredCatalogs(configuration.catalogs)
        var args = registered.personalDataArgs
        for (name, inClear) in configuration.personalDataSentInClear {
            args[name]?.subtract(inClear)
            if args[name]?.isEmpty == true { args[name] = nil }
        }
        guard !args.isEmpty else { return (registered, nil) }
        let salt = configuration.personalDataSalt ?? PersonalDataProcessor.processSalt
        return (registered, PersonalDataProcessor(personalArgsByEvent: args, treatment: .hash(salt: salt)))
    }

    /// Forwards `clear` hashed, except to the trackers that asked for personal data in clear.
    func forwardHashingPersonalData(
        _ clear: MeasurementEvent, with hashing: PersonalDataProcessor, to trackers: [any EventTracker],
        violations: [PlanViolation] = []
    ) {
        // A hashing processor never discards.
        let hashed = hashing.process(clear) ?? clear
        if inbox.trail != nil { return forwardRecording(clear, hashed, to: trackers, violations: violations) }
        didReceive(hashed)
        for tracker in trackers {
            let event = tracker is PersonalDataInClearTracker ? clear : hashed
            do {
                try tracker.track(event)
            } catch {
                trackerFailed(tracker, on: event.name, error)
            }
        }
    }
}
