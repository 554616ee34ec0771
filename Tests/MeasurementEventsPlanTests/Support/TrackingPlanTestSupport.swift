import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsPlan
import MeasurementEventsTesting

/// The plan most plan tests start from.
let examplePlanJSON = """
    {
      "version": 1,
      "destinations": ["amplitude", "console"],
      "screens": {
        "FeedViewController": "Feed",
        "SettingsViewController": "Settings"
      },
      "events": {
        "feed/item_tapped": { "label": "Feed item tapped", "destinations": ["amplitude"] },
        "feed/*": { "label": "Feed" },
        "app/permission/*": { "label": "Permission", "destinations": ["console"] }
      },
      "allow": ["settings/opened"],
      "deny": ["feed/debug/*"]
    }
    """

let exampleCatalog = TrackingPlan.Catalog(names: [
    "feed/opened", "feed/item_tapped", "feed/item_shared", "feed/debug/layout_pass",
    "settings/opened", "settings/theme_changed", "app/permission/photo_library/granted",
])

func plan(_ json: String, catalog: TrackingPlan.Catalog? = nil, strictness: TrackingPlan.Strictness = .strict) throws
    -> TrackingPlan
{
    try TrackingPlan(data: Data(json.utf8), file: "plan.json", catalog: catalog, strictness: strictness)
}

extension EventAggregator.Configuration {
    static var deliveredSynchronously: Self {
        var configuration = Self.testing  // identity in memory: tests share no identity file
        configuration.delivery = .synchronous
        return configuration
    }
}
