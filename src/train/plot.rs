//! SVG charts of calibration (`eval --calibration --plot FILE.svg`): the reliability diagram
//! (share correct against mean confidence per bin, for arcs and sentences, with the diagonal of
//! perfect calibration) and the coverage curve (LAS of the kept words against the share of
//! words kept, by confidence and by the best possible ranking). This module draws; the numbers come from `eval` and `confidence`.

use std::path::Path;

use plotters::prelude::*;

use crate::learn::confidence::Reliability;
use crate::train::eval::Calibration;

/// Why a chart could not be drawn.
#[derive(Debug, thiserror::Error)]
#[error("drawing {path}: {message}")]
pub struct PlotError {
    pub path: String,
    pub message: String,
}

fn points(r: &Reliability) -> Vec<(f64, f64)> {
    r.bins().iter().filter(|b| b.count > 0).map(|b| (b.mean_confidence, b.accuracy)).collect()
}

/// Draws the reliability diagram and the coverage curve side by side into an SVG file.
pub fn calibration_svg(path: &Path, cal: &Calibration) -> Result<(), PlotError> {
    let err = |e: &dyn std::fmt::Display| PlotError { path: path.display().to_string(), message: e.to_string() };
    let root = SVGBackend::new(path, (1000, 450)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let (left, right) = root.split_horizontally(500);

    let mut chart = ChartBuilder::on(&left)
        .caption("Reliability (share correct vs confidence)", ("sans-serif", 18))
        .margin(15)
        .x_label_area_size(35)
        .y_label_area_size(45)
        .build_cartesian_2d(0.0..1.0, 0.0..1.0)
        .map_err(|e| err(&e))?;
    chart.configure_mesh().x_desc("mean confidence").y_desc("share correct").draw().map_err(|e| err(&e))?;
    chart.draw_series(LineSeries::new([(0.0, 0.0), (1.0, 1.0)], BLACK.mix(0.4))).map_err(|e| err(&e))?;
    chart
        .draw_series(LineSeries::new(points(&cal.arcs), BLUE.stroke_width(2)))
        .map_err(|e| err(&e))?
        .label("arcs")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 15, y)], BLUE));
    chart
        .draw_series(LineSeries::new(points(&cal.sentences), RED.stroke_width(2)))
        .map_err(|e| err(&e))?
        .label("sentences (LAS)")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 15, y)], RED));
    chart.configure_series_labels().border_style(BLACK).draw().map_err(|e| err(&e))?;

    // Coverage by words: each percent of the words, kept by confidence and by the best ranking.
    let shares: Vec<f64> = (1..=100).map(|t| f64::from(t) / 100.0).collect();
    let kept = cal.words_kept(&shares);
    let low = kept.iter().map(|k| k.las.min(k.best)).fold(100.0f64, f64::min).floor();
    let mut chart = ChartBuilder::on(&right)
        .caption("Coverage (LAS of the kept words)", ("sans-serif", 18))
        .margin(15)
        .x_label_area_size(35)
        .y_label_area_size(45)
        .build_cartesian_2d(0.0..100.0, low..100.0)
        .map_err(|e| err(&e))?;
    chart.configure_mesh().x_desc("% of words kept (whole sentences)").y_desc("LAS").draw().map_err(|e| err(&e))?;
    chart
        .draw_series(LineSeries::new(kept.iter().map(|k| (k.words, k.las)), GREEN.stroke_width(2)))
        .map_err(|e| err(&e))?
        .label("by confidence")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 15, y)], GREEN));
    chart
        .draw_series(LineSeries::new(kept.iter().map(|k| (k.words, k.best)), BLACK.mix(0.4)))
        .map_err(|e| err(&e))?
        .label("best ranking (true LAS)")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 15, y)], BLACK.mix(0.4)));
    chart
        .configure_series_labels()
        .border_style(BLACK)
        .position(SeriesLabelPosition::LowerLeft)
        .draw()
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))
}
