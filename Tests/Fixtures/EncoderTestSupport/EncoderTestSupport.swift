import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsHTTP

/// One event of each type; the first carries every arg type and a personal arg, hashed.
package func sampleBatch() -> [QueuedEvent] {
    let privacy = PersonalDataProcessor(personalArgs: ["email"], treatment: .hash(salt: "salt-1"))
    func id(_ n: Int) -> UUID { UUID(uuidString: "00000000-0000-4000-8000-00000000000\(n)")! }
    let tapped = MeasurementEvent(
        "feed/item_tapped", type: .click, category: "feed",
        args: ["item_id": "42", "position": 3, "ratio": 0.5, "promoted": true, "email": "jane@example.com"],
        label: "Feed Item Tapped", id: id(1), timestamp: Date(timeIntervalSince1970: 1_714_566_600.5))
    let events = [
        privacy.process(tapped)!,
        MeasurementEvent(
            "feed/item_shown", type: .impression, id: id(2), timestamp: Date(timeIntervalSince1970: 1_714_566_601.25)),
        MeasurementEvent(
            "app/launched", type: .activity, id: id(3), timestamp: Date(timeIntervalSince1970: 1_714_566_602)),
        MeasurementEvent(
            "web/redirected", type: .redirect, id: id(4), timestamp: Date(timeIntervalSince1970: 1_714_566_603)),
        MeasurementEvent(
            "settings/saved", type: .userAction, id: id(5), timestamp: Date(timeIntervalSince1970: 1_714_566_604)),
    ]
    return events.map { event in
        var event = event
        event.attribution = EventAttribution(identity: EventIdentity(userID: "user-42", anonymousID: "anon-1234"))
        return QueuedEvent(event: event)
    }
}

/// The batch context of the samples (`EncoderTestContext.value`, under the name most tests use).
package let context = EncoderTestContext.value

/// One track, identify and group call with everything set: a signed-in user with traits, a
/// group with traits, a session and a full device and app context.
package enum EncoderSamples {
    package static let context = EventContext(
        app: .init(name: "Shop", version: "2.4.1", build: "812", bundleID: "com.example.shop"),
        os: .init(name: "iOS", version: "17.2.1"), device: .init(model: "iPhone15,2", manufacturer: "Apple"),
        locale: "en-US", timeZone: "Europe/Berlin", library: .init(name: "MeasurementEvents", version: "1.1.0"),
        extra: ["screen_width": 390])
    package static let identity = EventIdentity(
        userID: "user-42", anonymousID: "anon-1234", traits: ["plan": "pro", "seats": 3], groupID: "acme",
        groupTraits: ["name": "Acme Inc", "employees": 120])
    package static let sessionID: Int64 = 1_714_566_000_000
    package static let attribution = EventAttribution(identity: identity, sessionID: sessionID, context: context)

    package static let track: QueuedEvent = {
        var event = MeasurementEvent(
            "feed/item_tapped", type: .click, category: "feed", args: ["item_id": "42", "position": 3],
            label: "Feed Item Tapped", id: UUID(uuidString: "00000000-0000-4000-8000-000000000001")!,
            timestamp: Date(timeIntervalSince1970: 1_714_566_600.5))
        event.attribution = attribution
        return QueuedEvent(event: event)
    }()

    package static let identify = QueuedEvent(
        IdentityEvent(
            change: .identify(userID: "user-42", traits: ["plan": "pro", "seats": 3]),
            id: UUID(uuidString: "00000000-0000-4000-8000-000000000002")!,
            timestamp: Date(timeIntervalSince1970: 1_714_566_601), attribution: attribution,
            previousIdentity: EventIdentity(anonymousID: "anon-1234")))!

    package static let group = QueuedEvent(
        IdentityEvent(
            change: .group(groupID: "acme", traits: ["name": "Acme Inc", "employees": 120]),
            id: UUID(uuidString: "00000000-0000-4000-8000-000000000003")!,
            timestamp: Date(timeIntervalSince1970: 1_714_566_602), attribution: attribution,
            previousIdentity: EventIdentity(userID: "user-42", anonymousID: "anon-1234")))!

    /// ``track`` as an iPad app on an iMac sends it: the system the context reports for an app
    /// compiled for iOS that ProcessInfo says runs on a Mac (macOS 14.2.1), and the Mac's model.
    package static let trackOnAMac: QueuedEvent = {
        let system = RunningSystem.describe(
            platform: .iOS, isMacCatalystApp: true, isiOSAppOnMac: true,
            version: OperatingSystemVersion(majorVersion: 14, minorVersion: 2, patchVersion: 1))
        var context = EncoderSamples.context
        context.os = EventContext.OS(name: system.osName, version: system.osVersion)
        context.device.model = "iMac21,1"
        var queued = EncoderSamples.track
        queued.event.attribution = EventAttribution(identity: identity, sessionID: sessionID, context: context)
        return queued
    }()

    package static func body(_ encoder: any BatchEncoder, _ queued: QueuedEvent) -> String {
        String(decoding: encoder.encode([queued], context: EncoderTestContext.value).request?.body ?? [], as: UTF8.self)
    }
}

package enum EncoderTestContext {
    package static let value = BatchContext(sentAt: Date(timeIntervalSince1970: 1_714_566_610))
}

/// `event` as posted by `userID` (anonymous id "anon-1234").
package func withUser(_ userID: String?, _ event: MeasurementEvent) -> MeasurementEvent {
    var event = event
    event.attribution = EventAttribution(identity: EventIdentity(userID: userID, anonymousID: "anon-1234"))
    return event
}

extension EncoderSamples {
    package static func bodyOf(_ encoder: any BatchEncoder, _ events: [QueuedEvent]) -> String {
        String(decoding: encoder.encode(events, context: EncoderTestContext.value).request?.body ?? [], as: UTF8.self)
    }
}
