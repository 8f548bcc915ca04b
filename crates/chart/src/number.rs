//! How numbers are written on axes and beside bars: as few digits as tell them apart.

/// `value` with no decimals from 100 up (and for whole numbers), one from 1, three below.
pub(crate) fn number(value: f64) -> String {
    if !value.is_finite() {
        String::new()
    } else if value.fract() == 0.0 || value.abs() >= 100.0 {
        format!("{value:.0}")
    } else if value.abs() >= 1.0 {
        format!("{value:.1}")
    } else {
        format!("{value:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::number;

    #[test]
    fn few_digits_and_nothing_for_non_numbers() {
        assert_eq!(number(0.0), "0");
        assert_eq!(number(4.0), "4");
        assert_eq!(number(2.5), "2.5");
        assert_eq!(number(1234.4), "1234");
        assert_eq!(number(0.25), "0.250");
        assert_eq!(number(f64::NAN), "");
        assert_eq!(number(f64::INFINITY), "");
    }
}
