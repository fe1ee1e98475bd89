# scalebench scaling model figure: Scaling model of scaling-model-holdout
# Re-render after editing: cd <this directory> && gnuplot plot-model.gp
set encoding utf8
data = 'plot-model.dat'
set linetype 1 lc rgb '#1f77b4' lw 2 pt 7 ps 1
set linetype 2 lc rgb '#ff7f0e' lw 2 pt 7 ps 1
set linetype 3 lc rgb '#2ca02c' lw 2 pt 7 ps 1
set linetype 4 lc rgb '#d62728' lw 2 pt 7 ps 1
set linetype 5 lc rgb '#9467bd' lw 2 pt 7 ps 1
set linetype 6 lc rgb '#8c564b' lw 2 pt 7 ps 1
set linetype 7 lc rgb '#e377c2' lw 2 pt 7 ps 1
set linetype 8 lc rgb '#7f7f7f' lw 2 pt 7 ps 1
set linetype 9 lc rgb '#bcbd22' lw 2 pt 7 ps 1
set linetype 10 lc rgb '#17becf' lw 2 pt 7 ps 1
set linetype cycle 10
set style line 100 lc rgb '#e0e0e0' lw 1 dt 1
set grid ls 100
set logscale x 2
set xlabel 'np (log scale)'
set format x '%g'
set key below center horizontal maxrows 2 samplen 3 spacing 1.1
set style fill transparent solid 0.25 noborder
do for [format in 'svg png pdf'] {
  if (format eq 'svg') {
    set terminal svg size 1000,450 dynamic enhanced font 'sans,12' background rgb 'white'
  } else { if (format eq 'png') {
    set terminal pngcairo size 1000,450 enhanced font 'sans,12' background rgb 'white'
  } else {
    set terminal pdfcairo size 10.00in,4.50in enhanced font 'sans,9' background rgb 'white'
  } }
  set output 'plot-model'.'.'.format
  set multiplot layout 1,2 title 'Scaling model of scaling-model-holdout: predicted and measured' noenhanced
  set title 'Scaling efficiency'
  set ylabel 'efficiency (%)'
  set yrange [0:105]
  unset logscale y
  plot data index 0 using 1:3:4 with filledcurves lt 1 title '95% interval', \
       data index 0 using 1:2 with lines lt 1 title 'predicted', \
       data index 1 using 1:2 with points lt 2 pt 7 ps 1.3 title 'measured, fitted', \
       data index 2 using 1:2 with points lt 3 pt 9 ps 1.6 title 'measured, held out'
  set title 'Throughput'
  set ylabel 'images/s (log scale)'
  set yrange [*:*]
  set logscale y 10
  plot data index 0 using 1:6:7 with filledcurves lt 1 title '95% interval', \
       data index 0 using 1:5 with lines lt 1 title 'predicted', \
       data index 1 using 1:3 with points lt 2 pt 7 ps 1.3 title 'measured, fitted', \
       data index 2 using 1:3 with points lt 3 pt 9 ps 1.6 title 'measured, held out'
  unset multiplot
  unset output
}
