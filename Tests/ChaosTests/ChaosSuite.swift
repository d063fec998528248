import Testing

/// Faults injected into the whole system (PostgreSQL, Redis, countdown-fake-fcm, real `countdown-worker`
/// processes), one scenario per file (`ScenarioNN<Name>.swift`, an extension of this suite), each judged by exact
/// lost / duplicated / unexpected start counts against its bound (`ChaosScenario`). Serialized: every scenario
/// measures timing on a machine it must not share with another scenario. `COUNTDOWN_CHAOS=full` runs the
/// documentation sizes (`scripts/chaos`); otherwise the quick sizes (`scripts/test`).
@Suite(.serialized) struct ChaosSuite {}
