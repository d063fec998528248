import TestSupport

/// The seeded choices of one randomized run (scenario 20), shared by everything that draws: the same seed gives the
/// same choices in the same order (timings still vary, so draws made while the run goes may come in another order).
final class ScenarioRandom {
    let seed: UInt64
    private var generator: SeededGenerator

    init(seed: UInt64) {
        self.seed = seed
        generator = SeededGenerator(seed: seed)
    }

    /// A fraction in [0, 1).
    func random() -> Double { Double.random(in: 0..<1, using: &generator) }

    /// A fraction in [low, high].
    func uniform(_ low: Double, _ high: Double) -> Double { Double.random(in: low...high, using: &generator) }

    /// An integer in [low, high].
    func int(_ low: Int, _ high: Int) -> Int { Int.random(in: low...high, using: &generator) }

    func choice<T>(_ elements: [T]) -> T { elements[int(0, elements.count - 1)] }

    func shuffle<T>(_ elements: inout [T]) { elements.shuffle(using: &generator) }
}
