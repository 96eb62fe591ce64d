//! The bootstrap, Student's t over repeats and the pairings, on made-up series.
use super::*;

fn steady(n: usize, per_unit: f64) -> Vec<f64> {
    // A little deterministic wobble, so the intervals are not empty.
    (0..n)
        .map(|i| per_unit * (1.0 + 0.05 * ((i * 7 % 11) as f64 - 5.0) / 5.0))
        .collect()
}

#[test]
fn a_steady_series_gives_a_narrow_interval_around_its_figure() {
    let acquired = steady(30, 1000.0);
    let seconds = vec![1.0; 30];
    let goodput = ratio_of_sums(&acquired, &seconds, Scale::NonNegative)
        .unwrap()
        .estimate();
    let (low, high) = goodput.interval().expect("30 intervals give an interval");
    assert!(low <= goodput.value && goodput.value <= high, "{goodput:?}");
    assert!(low > 950.0 && high < 1050.0, "{goodput:?}");
}

#[test]
fn too_few_intervals_give_no_interval() {
    let goodput = ratio_of_sums(&[10.0; 4], &[1.0; 4], Scale::NonNegative).unwrap();
    assert!(goodput.draws.is_empty());
    assert_eq!(goodput.estimate().interval(), None);
    assert_eq!(Order::of(&goodput.estimate(), 1.0), Order::TooShort);
}

#[test]
fn the_same_series_twice_shows_no_clear_difference_and_a_real_gap_shows_an_order() {
    let seconds = vec![1.0; 20];
    let a = ratio_of_sums(&steady(20, 1000.0), &seconds, Scale::NonNegative).unwrap();
    let a_again = ratio_of_sums(&steady(20, 1000.0), &seconds, Scale::NonNegative).unwrap();
    let same = a.ratio(&a_again).unwrap().estimate();
    assert_eq!(Order::of(&same, 1.0), Order::NoClearDifference, "{same:?}");
    let b = ratio_of_sums(&steady(20, 1500.0), &seconds, Scale::NonNegative).unwrap();
    let faster = b.ratio(&a).unwrap().estimate();
    assert_eq!(Order::of(&faster, 1.0), Order::Higher, "{faster:?}");
    assert!(faster.covers(1.5), "{faster:?}");
    assert_eq!(Order::of(&a.difference(&b).estimate(), 0.0), Order::Lower);
}

#[test]
fn a_burst_in_one_interval_widens_the_interval() {
    let seconds = vec![1.0; 20];
    let calm = ratio_of_sums(&steady(20, 1000.0), &seconds, Scale::NonNegative)
        .unwrap()
        .estimate();
    let mut bursty = steady(20, 1000.0);
    bursty[7] = 10_000.0;
    let bursty = ratio_of_sums(&bursty, &seconds, Scale::NonNegative)
        .unwrap()
        .estimate();
    let width = |e: &Estimate| e.high.unwrap() - e.low.unwrap();
    assert!(width(&bursty) > 5.0 * width(&calm), "{calm:?} {bursty:?}");
}

#[test]
fn the_same_input_gives_the_same_interval() {
    let seconds = vec![1.0; 12];
    let one = ratio_of_sums(&steady(12, 300.0), &seconds, Scale::NonNegative)
        .unwrap()
        .estimate();
    let two = ratio_of_sums(&steady(12, 300.0), &seconds, Scale::NonNegative)
        .unwrap()
        .estimate();
    assert_eq!(one, two);
}

#[test]
fn repeats_give_students_t_over_their_own_figures() {
    // Five repeats of four intervals each; repeat r measured 100 + 10·r per interval.
    let segments: Vec<Range<usize>> = (0..5).map(|r| r * 4..r * 4 + 4).collect();
    let per_interval: Vec<f64> = (0..20).map(|i| 100.0 + 10.0 * (i / 4) as f64).collect();
    let seconds = vec![1.0; 20];
    let e = ratio_of_sums_in(&segments, &per_interval, &seconds, Scale::NonNegative)
        .unwrap()
        .estimate();
    // Mean 120, s = 15.81, t(4) = 2.776: 120 ± 19.63, in closed form.
    let (low, high) = e.interval().expect("five repeats give an interval");
    assert!((e.value - 120.0).abs() < 1e-9, "{e:?}");
    assert!(
        (low - 100.37).abs() < 0.01 && (high - 139.63).abs() < 0.01,
        "{e:?}"
    );
    // One repeat alone says nothing about the spread between repeats.
    let one = across_repeats(&segments[..1], Scale::NonNegative, |d| Some(d.len() as f64));
    assert_eq!(one.unwrap().estimate().interval(), None);
    // Identical repeats: no spread at all.
    let same = ratio_of_sums_in(&segments, &[100.0; 20], &seconds, Scale::NonNegative)
        .unwrap()
        .estimate();
    assert_eq!(same.interval(), Some((100.0, 100.0)));
}

#[test]
fn two_modes_of_the_same_repeats_pair_up_and_their_drift_cancels() {
    // Five repeats drifting from 100 to 500 per interval; mode b measures twice mode a in
    // each repeat.
    let segments: Vec<Range<usize>> = (0..5).map(|r| r * 4..r * 4 + 4).collect();
    let a: Vec<f64> = (0..20).map(|i| 100.0 * (1 + i / 4) as f64).collect();
    let b: Vec<f64> = a.iter().map(|x| 2.0 * x).collect();
    let seconds = vec![1.0; 20];
    let (a, b) = (
        ratio_of_sums_in(&segments, &a, &seconds, Scale::NonNegative).unwrap(),
        ratio_of_sums_in(&segments, &b, &seconds, Scale::NonNegative).unwrap(),
    );
    let paired = b.paired_ratio(&a).unwrap().estimate();
    let (low, high) = paired.interval().unwrap();
    assert!(
        (low - 2.0).abs() < 1e-9 && (high - 2.0).abs() < 1e-9,
        "{paired:?}"
    );
    // Taken as independent, the drift hides the difference.
    let apart = b.ratio(&a).unwrap().estimate();
    assert_eq!(
        Order::of(&apart, 1.0),
        Order::NoClearDifference,
        "{apart:?}"
    );
    // A single run has no repeats to pair.
    let single = ratio_of_sums(&[1.0; 20], &seconds, Scale::NonNegative).unwrap();
    assert!(single.paired_ratio(&single).is_none());
}

#[test]
fn two_sides_in_turns_pair_their_differences_and_keep_their_sign() {
    // Five turns drifting from 100 to 500 per interval; side b measures 50 less than side
    // a in each turn, noise of ±5 on top.
    let segments: Vec<Range<usize>> = (0..5).map(|r| r * 4..r * 4 + 4).collect();
    let a: Vec<f64> = (0..20).map(|i| 100.0 * (1 + i / 4) as f64).collect();
    let b: Vec<f64> = (0..20)
        .map(|i| a[i] - 50.0 + if (i / 4) % 2 == 0 { 5.0 } else { -5.0 })
        .collect();
    let seconds = vec![1.0; 20];
    let (a, b) = (
        ratio_of_sums_in(&segments, &a, &seconds, Scale::NonNegative).unwrap(),
        ratio_of_sums_in(&segments, &b, &seconds, Scale::NonNegative).unwrap(),
    );
    let paired = b.paired_difference(&a).unwrap().estimate();
    let (low, high) = paired.interval().unwrap();
    // Below zero (no clamp at 0, unlike a figure's own draws), around −50, narrow.
    assert!(low < -50.0 && -50.0 < high && high < 0.0, "{paired:?}");
    assert_eq!(Order::of(&paired, 0.0), Order::Lower, "{paired:?}");
    // Taken as independent, the drift hides the difference.
    let apart = b.difference(&a).estimate();
    assert_eq!(
        Order::of(&apart, 0.0),
        Order::NoClearDifference,
        "{apart:?}"
    );
    // Repeats that do not line up (a side stopped early) do not pair.
    let short =
        ratio_of_sums_in(&segments[..3], &[1.0; 12], &[1.0; 12], Scale::NonNegative).unwrap();
    assert!(short.paired_difference(&a).is_none());
}

#[test]
fn a_ratio_of_a_skewed_positive_figure_never_reaches_zero() {
    // A p99 per turn: side b is far slower in one turn of five, a little in the others.
    let segments: Vec<Range<usize>> = (0..5).map(|r| r..r + 1).collect();
    let a = [100.0, 120.0, 90.0, 110.0, 100.0];
    let b = [130.0, 150.0, 40_000.0, 140.0, 120.0];
    let of = |v: [f64; 5]| across_repeats(&segments, Scale::Log, |d| Some(v[d[0]])).unwrap();
    let (a, b) = (of(a), of(b));
    let ratio = b.paired_ratio(&a).unwrap().estimate();
    let (low, _) = ratio.interval().unwrap();
    assert!(low > 0.1, "{ratio:?}");
    // Taken as independent sets of repeats (Welch's on the logarithms): positive too.
    let apart = b.ratio(&a).unwrap().estimate();
    assert!(apart.low.unwrap() > 0.0, "{apart:?}");
    // Repeats against a single run's bootstrap draws: their draws pair.
    let single = ratio_of_sums(&[110.0; 20], &[1.0; 20], Scale::NonNegative).unwrap();
    let mixed = a.ratio(&single).unwrap().estimate();
    assert!(mixed.covers(1.0), "{mixed:?}");
}

#[test]
fn an_undefined_figure_is_none_and_blocks_never_pass_the_end() {
    assert!(ratio_of_sums(&[0.0; 6], &[0.0; 6], Scale::NonNegative).is_none());
    for n in 1..50 {
        let b = block_length(n);
        assert!(b >= 1 && b <= n, "n {n} block {b}");
    }
    // Every drawn index is in range (the closure would panic otherwise).
    let units = 17;
    bootstrap(units, Scale::NonNegative, |drawn| {
        assert_eq!(drawn.len(), units);
        assert!(drawn.iter().all(|&i| i < units));
        Some(1.0)
    })
    .unwrap();
}
