# scalebench scaling figure, experiment horovodrunner-table2-quick
# Re-render after editing: cd <this directory> && gnuplot plot-scaling.gp
set encoding utf8
data = 'plot-scaling.dat'
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
stats data index 2 using 2 nooutput name 'single2_time'
stats data index 2 using 4 nooutput name 'single2_rate'
stats data index 3 using 2 nooutput name 'single3_time'
stats data index 3 using 4 nooutput name 'single3_rate'
stats data using 4 nooutput name 'rate'
set style line 100 lc rgb '#e0e0e0' lw 1 dt 1
set grid ls 100
set border lw 1
set xlabel 'processes (np)'
set xrange [0.5:2.5]
set xtics (1, 2)
set offsets 0, 0, graph 0.05, 0
do for [format in 'svg png pdf'] {
  if (format eq 'svg') {
    set terminal svg size 1000,494 dynamic enhanced font 'sans,12' background rgb 'white'
  } else { if (format eq 'png') {
    set terminal pngcairo size 1000,494 enhanced font 'sans,12' background rgb 'white'
  } else {
    set terminal pdfcairo size 10.00in,4.94in enhanced font 'sans,9' background rgb 'white'
  } }
  set output 'plot-scaling'.'.'.format
  set multiplot layout 1,2 title 'horovodrunner-table2-quick: scaling with the number of processes' noenhanced
  set title 'Mean epoch time (error bars: 95% CI of the mean, unit run)'
  set ylabel 'epoch time (s)'
  set yrange [0:*]
  set key below center horizontal samplen 3 spacing 1.1
  plot data index 0 using 1:2:(valid(6) ? $6 : $2):(valid(7) ? $7 : $2) with yerrorlines lt 1 title 'hvd model=vgg16' noenhanced, \
       data index 1 using 1:2:(valid(6) ? $6 : $2):(valid(7) ? $7 : $2) with yerrorlines lt 2 title 'hvd model=inception_v3' noenhanced, \
       data index 2 using ($1-0.08):2:(valid(6) ? $6 : $2):(valid(7) ? $7 : $2) with yerrorbars lt 3 pt 13 ps 1.6 title 'single model=vgg16' noenhanced, \
       single2_time_mean with lines lt 3 dt 2 lw 1 notitle, \
       data index 3 using ($1-0.08):2:(valid(6) ? $6 : $2):(valid(7) ? $7 : $2) with yerrorbars lt 4 pt 13 ps 1.6 title 'single model=inception_v3' noenhanced, \
       single3_time_mean with lines lt 4 dt 2 lw 1 notitle
  set title 'Training throughput (dashed: linear scaling)'
  set ylabel 'throughput (images/s)'
  set yrange [0:rate_max*1.5]
  set key below center horizontal samplen 3 spacing 1.1
  plot data index 0 using 1:4 with linespoints lt 1 title 'hvd model=vgg16' noenhanced, \
       data index 1 using 1:4 with linespoints lt 2 title 'hvd model=inception_v3' noenhanced, \
       data index 2 using ($1-0.08):4 with points lt 3 pt 13 ps 1.6 title 'single model=vgg16' noenhanced, \
       single2_rate_mean with lines lt 3 dt 2 lw 1 notitle, \
       data index 3 using ($1-0.08):4 with points lt 4 pt 13 ps 1.6 title 'single model=inception_v3' noenhanced, \
       single3_rate_mean with lines lt 4 dt 2 lw 1 notitle, \
       data index 0 using 1:5 with lines lt 1 dt 2 lw 1.5 title 'hvd model=vgg16: linear' noenhanced, \
       data index 1 using 1:5 with lines lt 2 dt 2 lw 1.5 title 'hvd model=inception_v3: linear' noenhanced
  unset multiplot
  unset output
}
