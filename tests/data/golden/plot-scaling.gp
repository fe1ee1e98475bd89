# scalebench scaling figure, experiment horovodrunner-table2-quick
# Caption: horovodrunner-table2-quick: scaling efficiency, mean epoch time and throughput against the number of processes, one colour and marker per series (2 runs per point). Bars: the 95% CI of the mean, unit run (the t interval on the runs' means; for images/s and efficiency the delta method; none at the reference np, whose efficiency is 100% by definition); open markers: the individual runs; dashed: linear scaling; diamonds: single-process runs.
# Re-render after editing: cd <this directory> && gnuplot plot-scaling.gp
set encoding utf8
data = 'plot-scaling.dat'
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
stats data index 2 using 2 nooutput name 'single2_time'
stats data index 2 using 4 nooutput name 'single2_rate'
stats data index 3 using 2 nooutput name 'single3_time'
stats data index 3 using 4 nooutput name 'single3_rate'
do for [format in 'svg png pdf'] {
  if (format eq 'svg') {
    set terminal svg size 672,278 dynamic enhanced font 'sans,12' linewidth 0.6667 background rgb 'white'
    key_spacing = 0.85
    key_drop = 0.5
  } else { if (format eq 'png') {
    key_spacing = 1.1
    key_drop = 0
    set terminal pngcairo size 1050,435 enhanced font 'sans,9' fontscale 1.562 linewidth 1.042 pointscale 2.083 background rgb 'white'
  } else {
    key_spacing = 1.1
    key_drop = 0
    set terminal pdfcairo size 7in,2.9in enhanced font 'sans,9' fontscale 0.75 linewidth 1 pointscale 1 background rgb 'white'
  } }
  set output 'plot-scaling'.'.'.format
  set multiplot
  # Panel 1: Scaling efficiency
  reset
  set style line 100 lc rgb '#e0e0e0' lw 1 dt 1
  set grid ls 100
  set border lw 1
  set encoding utf8
  set xlabel 'processes (np)' noenhanced
  set xrange [0.5:2.5]
  set xtics (1, 2) nomirror
  set ytics nomirror
  set border 3
  set errorbars 0.4
  set offsets 0, 0, graph 0.06, 0
  set origin 0, 0
  set size 0.3333, 1
  set bmargin at screen 0.4052
  set tmargin at screen 0.819
  unset key
  set label 1 'horovodrunner-table2-quick: scaling with the number of processes, 2 runs per point' at screen 0.5, screen 0.9569 center noenhanced
  set title 'Scaling efficiency' offset 0,-0.4 noenhanced
  set ylabel 'efficiency (%)' noenhanced
  set yrange [0:*]
  plot 100 with lines lc rgb '#606060' dt 2 lw 1 notitle, \
       data index 4 using 2:5 with points lt 1 pt 6 ps 0.55 lw 1 notitle, \
       data index 0 using 14:(bar($10, $11, $12)):(floor_at($11, 0)):12 with yerrorbars lt 1 pt 7 notitle, \
       data index 0 using 14:10 with linespoints lt 1 pt 7 notitle, \
       data index 5 using 2:5 with points lt 2 pt 4 ps 0.55 lw 1 notitle, \
       data index 1 using 14:(bar($10, $11, $12)):(floor_at($11, 0)):12 with yerrorbars lt 2 pt 5 notitle, \
       data index 1 using 14:10 with linespoints lt 2 pt 5 notitle
  # Panel 2: Mean epoch time
  reset
  set style line 100 lc rgb '#e0e0e0' lw 1 dt 1
  set grid ls 100
  set border lw 1
  set encoding utf8
  set xlabel 'processes (np)' noenhanced
  set xrange [0.5:2.5]
  set xtics (1, 2) nomirror
  set ytics nomirror
  set border 3
  set errorbars 0.4
  set offsets 0, 0, graph 0.06, 0
  set origin 0.3333, 0
  set size 0.3333, 1
  set bmargin at screen 0.4052
  set tmargin at screen 0.819
  unset key
  set title 'Mean epoch time' offset 0,-0.4 noenhanced
  set ylabel 'epoch time (s)' noenhanced
  set yrange [0:*]
  plot single2_time_mean with lines lt 3 dt 3 lw 1 notitle, \
       single3_time_mean with lines lt 4 dt 3 lw 1 notitle, \
       data index 4 using 2:3 with points lt 1 pt 6 ps 0.55 lw 1 notitle, \
       data index 0 using 14:(bar($2, $6, $7)):(floor_at($6, 0)):7 with yerrorbars lt 1 pt 7 notitle, \
       data index 0 using 14:2 with linespoints lt 1 pt 7 notitle, \
       data index 5 using 2:3 with points lt 2 pt 4 ps 0.55 lw 1 notitle, \
       data index 1 using 14:(bar($2, $6, $7)):(floor_at($6, 0)):7 with yerrorbars lt 2 pt 5 notitle, \
       data index 1 using 14:2 with linespoints lt 2 pt 5 notitle, \
       data index 6 using 2:3 with points lt 3 pt 12 ps 0.55 lw 1 notitle, \
       data index 2 using 14:(bar($2, $6, $7)):(floor_at($6, 0)):7 with yerrorbars lt 3 pt 13 ps 1.3 notitle, \
       data index 2 using 14:2 with points lt 3 pt 13 ps 1.3 notitle, \
       data index 7 using 2:3 with points lt 4 pt 12 ps 0.55 lw 1 notitle, \
       data index 3 using 14:(bar($2, $6, $7)):(floor_at($6, 0)):7 with yerrorbars lt 4 pt 13 ps 1.3 notitle, \
       data index 3 using 14:2 with points lt 4 pt 13 ps 1.3 notitle
  # Panel 3: Throughput
  reset
  set style line 100 lc rgb '#e0e0e0' lw 1 dt 1
  set grid ls 100
  set border lw 1
  set encoding utf8
  set xlabel 'processes (np)' noenhanced
  set xrange [0.5:2.5]
  set xtics (1, 2) nomirror
  set ytics nomirror
  set border 3
  set errorbars 0.4
  set offsets 0, 0, graph 0.06, 0
  set origin 0.6667, 0
  set size 0.3333, 1
  set bmargin at screen 0.4052
  set tmargin at screen 0.819
  unset key
  set title 'Throughput' offset 0,-0.4 noenhanced
  set ylabel 'images/s' noenhanced
  set yrange [0:*]
  plot data index 0 using 14:5 with lines lt 1 dt 2 lw 1 notitle, \
       data index 1 using 14:5 with lines lt 2 dt 2 lw 1 notitle, \
       single2_rate_mean/1 with lines lt 3 dt 3 lw 1 notitle, \
       single3_rate_mean/1 with lines lt 4 dt 3 lw 1 notitle, \
       data index 4 using 2:4 with points lt 1 pt 6 ps 0.55 lw 1 notitle, \
       data index 0 using 14:(bar($4, $8, $9)):(floor_at($8, 0)):9 with yerrorbars lt 1 pt 7 notitle, \
       data index 0 using 14:4 with linespoints lt 1 pt 7 notitle, \
       data index 5 using 2:4 with points lt 2 pt 4 ps 0.55 lw 1 notitle, \
       data index 1 using 14:(bar($4, $8, $9)):(floor_at($8, 0)):9 with yerrorbars lt 2 pt 5 notitle, \
       data index 1 using 14:4 with linespoints lt 2 pt 5 notitle, \
       data index 6 using 2:4 with points lt 3 pt 12 ps 0.55 lw 1 notitle, \
       data index 2 using 14:(bar($4, $8, $9)):(floor_at($8, 0)):9 with yerrorbars lt 3 pt 13 ps 1.3 notitle, \
       data index 2 using 14:4 with points lt 3 pt 13 ps 1.3 notitle, \
       data index 7 using 2:4 with points lt 4 pt 12 ps 0.55 lw 1 notitle, \
       data index 3 using 14:(bar($4, $8, $9)):(floor_at($8, 0)):9 with yerrorbars lt 4 pt 13 ps 1.3 notitle, \
       data index 3 using 14:4 with points lt 4 pt 13 ps 1.3 notitle
  # The legend, shared by the panels
  reset
  unset border
  unset tics
  unset xlabel
  unset ylabel
  set origin 0, 0
  set size 1, 1
  set lmargin at screen 0
  set rmargin at screen 1
  set bmargin at screen 0
  set tmargin at screen 1
  set xrange [0:1]
  set yrange [0:1]
  set key at screen 0.5, screen 0.2457 - key_drop * 0.0431 center top vertical Left reverse maxrows 4 samplen 2 spacing key_spacing width -4 noenhanced
  plot -1 notitle, \
       keyentry with linespoints lt 1 pt 7 title 'hvd, model = vgg16', \
       keyentry with linespoints lt 2 pt 5 title 'hvd, model = inception_v3', \
       keyentry with linespoints lt 3 dt 3 lw 1 pt 13 ps 1.3 title 'single, model = vgg16', \
       keyentry with linespoints lt 4 dt 3 lw 1 pt 13 ps 1.3 title 'single, model = inception_v3', \
       keyentry with points lc rgb '#606060' pt 6 ps 0.55 lw 1 title 'runs', \
       keyentry with yerrorbars lc rgb '#606060' pt 7 title 'mean ± 95% CI', \
       keyentry with lines lc rgb '#606060' dt 2 lw 1 title 'linear scaling'
  unset multiplot
  unset output
}
