import Foundation
import MeasurementEvents

extension EventAggregator {
    /// The ``Configuration/catalogs`` registered: merged, the processor that hashes their
    /// personal args (minus those sent in clear; none when nothing is left to hash), and the
    /// plan's checker with its step, and the catalogs' routing. Reached only through `Configuration.registering`, which
    /// setting the catalogs sets: an app that registers none links none of it.
    static func register(_ configuration: Configuration) -> RegisteredSupport {
        var registered = RegisteredSupport(catalogs: RegisteredCatalogs(configuration.catalogs))
        var args = registered.catalogs.personalDataArgs
        for (name, inClear) in configuration.personalDataSentInClear {
            args[name]?.subtract(inClear)
            if args[name]?.isEmpty == true { args[name] = nil }
        }
        if !args.isEmpty {
            // Without an app-wide salt, the install's salt is used at delivery (see below).
            let salt = configuration.personalDataSalt ?? ""
            registered.personalDataStep = PersonalDataStep(
                hashing: PersonalDataProcessor(personalArgsByEvent: args, treatment: .hash(salt: salt)))
        }
        // An event whose catalog names its destinations reaches only those (`Destination`).
        for catalog in registered.catalogs.catalogs {
            for spec in catalog.events {
                guard let names = spec.destinations else { continue }
                registered.routes[spec.name, default: []].formUnion(names)
            }
        }
        if let checker = PlanChecker(registered.catalogs, policy: configuration.planConformance) {
            registered.planChecker = checker
            registered.planStep = PlanStep(checker: checker)
        }
        return registered
    }
}

/// What registering the catalogs gave an aggregator (`EventAggregator.register(_:)`): nothing
/// to check, hash or route without catalogs.
struct RegisteredSupport {
    var catalogs = RegisteredCatalogs()
    var planChecker: PlanChecker?
    /// The plan's step (`PlanStep`), made here: reached through this value, the checks are not
    /// linked into an app that registers no catalog.
    var planStep: (any DeliveryStep)?
    /// The personal-data step (`PersonalDataStep`), made here for the same reason.
    var personalDataStep: (any DeliveryStep)?
    /// The destinations each event may reach, for the events whose catalog names them.
    var routes: [EventName: Set<String>] = [:]
}
