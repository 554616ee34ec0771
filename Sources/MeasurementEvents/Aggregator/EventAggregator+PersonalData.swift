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
        // Without an app-wide salt, the install's salt is used at delivery (see below).
        let salt = configuration.personalDataSalt ?? ""
        return (registered, PersonalDataProcessor(personalArgsByEvent: args, treatment: .hash(salt: salt)))
    }

    /// Forwards `clear` hashed, except to the trackers that asked for personal data in clear.
    func forwardHashingPersonalData(
        _ clear: MeasurementEvent, with hashing: PersonalDataProcessor, to trackers: [any EventTracker],
        violations: [PlanViolation] = []
    ) {
        // Without an app-wide salt, the install's (delivery context: the attribution's own).
        let hashing =
            configuration.personalDataSalt != nil
            ? hashing
            : PersonalDataProcessor(
                personalArgsByEvent: hashing.personalArgsByEvent, treatment: .hash(salt: attribution.personalDataSalt))
        // A hashing processor never discards.
        let hashed = hashing.process(clear) ?? clear
        if inbox.recordsTrail { return forwardRecording(clear, hashed, to: trackers, violations: violations) }
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
