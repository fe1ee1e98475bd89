# scalebench scaling model figure: Scaling model of scaling-model-holdout
# Re-render after editing: cd <this directory> && gnuplot model-html-plot.gp
set encoding utf8
data = 'model-html-plot.dat'
set linetype 1 lc rgb '#0072B2' lw 1.6 pt 7 ps 0.7
set linetype 2 lc rgb '#D55E00' lw 1.6 pt 7 ps 0.7
set linetype 3 lc rgb '#009E73' lw 1.6 pt 7 ps 0.7
set linetype 4 lc rgb '#CC79A7' lw 1.6 pt 7 ps 0.7
set linetype 5 lc rgb '#E69F00' lw 1.6 pt 7 ps 0.7
set linetype 6 lc rgb '#56B4E9' lw 1.6 pt 7 ps 0.7
set linetype 7 lc rgb '#000000' lw 1.6 pt 7 ps 0.7
set linetype cycle 7
bar(y, low, high) = (low == low && high == high) ? y : NaN
floor_at(low, start) = (low == low && low < start) ? start : low
set style line 100 lc rgb '#e0e0e0' lw 1 dt 1
set grid ls 100
set logscale x 2
set xlabel 'np (log scale)'
set format x '%g'
set xtics 1, 2
set key below center horizontal maxrows 2 samplen 3 spacing 1.1
set style fill transparent solid 0.25 noborder
do for [format in 'svg png pdf'] {
  if (format eq 'svg') {
    set terminal svg size 672,269 dynamic enhanced font 'sans,12' linewidth 0.6667 background rgb 'white'
    key_spacing = 0.85
    key_drop = 0.5
  } else { if (format eq 'png') {
    key_spacing = 1.1
    key_drop = 0
    set terminal pngcairo size 1050,420 enhanced font 'sans,9' fontscale 1.562 linewidth 1.042 pointscale 2.083 background rgb 'white'
  } else {
    key_spacing = 1.1
    key_drop = 0
    set terminal pdfcairo size 7in,2.8in enhanced font 'sans,9' fontscale 0.75 linewidth 1 pointscale 1 background rgb 'white'
  } }
  set output 'model-html-plot'.'.'.format
  set multiplot layout 1,2 title 'Scaling model of scaling-model-holdout: predicted and measured' noenhanced
  set title 'Scaling efficiency'
  set ylabel 'efficiency (%)'
  set yrange [0:105]
  unset logscale y
  plot data index 0 using 1:3:4 with filledcurves lt 1 title '95% band', \
       data index 0 using 1:2 with lines lt 1 title 'predicted', \
       data index 1 using 1:2:3:4 with yerrorbars lt 2 pt 7 ps 0.6 title 'mean ± CI, fitted', \
       data index 2 using 1:2:3:4 with yerrorbars lt 3 pt 9 ps 0.8 title 'held out', \
       data index 3 using 1:2 with points pt 6 ps 0.4 lc rgb '#303030' title 'runs'
  set title 'Throughput'
  set ylabel 'images/s (log scale)'
  set yrange [*:*]
  set logscale y 10
  plot data index 0 using 1:6:7 with filledcurves lt 1 title '95% band', \
       data index 0 using 1:5 with lines lt 1 title 'predicted', \
       data index 1 using 1:5:6:7 with yerrorbars lt 2 pt 7 ps 0.6 title 'mean ± CI, fitted', \
       data index 2 using 1:5:6:7 with yerrorbars lt 3 pt 9 ps 0.8 title 'held out', \
       data index 3 using 1:3 with points pt 6 ps 0.4 lc rgb '#303030' title 'runs'
  unset multiplot
  unset output
}
