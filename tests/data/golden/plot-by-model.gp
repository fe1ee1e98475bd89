# scalebench scaling figure, experiment horovodrunner-table2-quick by model
# Re-render after editing: cd <this directory> && gnuplot plot-by-model.gp
set encoding utf8
data = 'plot-by-model.dat'
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
stats data using 4 nooutput name 'rate'
stats data using 7 nooutput name 'efficiency'
set style line 100 lc rgb '#e0e0e0' lw 1 dt 1
set grid ls 100
set border lw 1
set xlabel 'processes (np)'
set xrange [0.5:2.5]
set xtics (1, 2)
set offsets 0, 0, graph 0.05, 0
set bars 1.5
do for [format in 'svg png pdf'] {
  if (format eq 'svg') {
    set terminal svg size 1500,500 dynamic enhanced font 'sans,12' background rgb 'white'
  } else { if (format eq 'png') {
    set terminal pngcairo size 1500,500 enhanced font 'sans,12' background rgb 'white'
  } else {
    set terminal pdfcairo size 15.00in,5.00in enhanced font 'sans,9' background rgb 'white'
  } }
  set output 'plot-by-model'.'.'.format
  set multiplot layout 1,3 title 'horovodrunner-table2-quick by model: error bars ±1 SD of the run-to-run spread (2 runs per point)' noenhanced
  set key below center horizontal maxrows 2 samplen 3 spacing 1.1
  set title 'Scaling efficiency (dashed: linear scaling = 100%)'
  set ylabel 'scaling efficiency (%)'
  set yrange [0:(efficiency_max > 110 ? efficiency_max*1.1 : 120)]
  plot data index 0 using 1:7:(valid(8) ? $8 : 0) with yerrorlines lt 1 title 'vgg16' noenhanced, \
       data index 1 using 1:7:(valid(8) ? $8 : 0) with yerrorlines lt 2 title 'inception_v3' noenhanced, \
       100 with lines lc rgb '#404040' dt 2 lw 1.5 title 'linear scaling'
  set title 'Mean epoch time'
  set ylabel 'epoch time (s)'
  set yrange [0:*]
  plot data index 0 using 1:2:(valid(3) ? $3 : 0) with yerrorlines lt 1 title 'vgg16' noenhanced, \
       data index 1 using 1:2:(valid(3) ? $3 : 0) with yerrorlines lt 2 title 'inception_v3' noenhanced, \
       data index 2 using ($1-0.08):2:(valid(3) ? $3 : 0) with yerrorbars lt 1 pt 13 ps 1.6 title 'vgg16, single' noenhanced, \
       data index 3 using ($1-0.08):2:(valid(3) ? $3 : 0) with yerrorbars lt 2 pt 13 ps 1.6 title 'inception_v3, single' noenhanced
  set title 'Training throughput (dashed: linear scaling)'
  set ylabel 'throughput (images/s)'
  set yrange [0:rate_max*1.5]
  plot data index 0 using 1:4:(valid(5) ? $5 : 0) with yerrorlines lt 1 title 'vgg16' noenhanced, \
       data index 0 using 1:6 with lines lt 1 dt 2 lw 1.5 notitle, \
       data index 1 using 1:4:(valid(5) ? $5 : 0) with yerrorlines lt 2 title 'inception_v3' noenhanced, \
       data index 1 using 1:6 with lines lt 2 dt 2 lw 1.5 notitle, \
       data index 2 using ($1-0.08):4:(valid(5) ? $5 : 0) with yerrorbars lt 1 pt 13 ps 1.6 title 'vgg16, single' noenhanced, \
       data index 3 using ($1-0.08):4:(valid(5) ? $5 : 0) with yerrorbars lt 2 pt 13 ps 1.6 title 'inception_v3, single' noenhanced
  unset multiplot
  unset output
}
