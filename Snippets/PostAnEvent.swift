// Posting from a feature module: one line, no vendor SDK imported.
import MeasurementEvents

let itemID = "42"
let position = 3

// snippet.show
MeasurementEvent.post("feed/item_tapped", type: .click, args: ["item_id": itemID, "position": position])
// snippet.end
