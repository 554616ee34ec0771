import MeasurementEvents

/// A module whose catalog declares no events yet.
public enum Onboarding {
    public static let allEventNames = OnboardingEvents.allNames
}
